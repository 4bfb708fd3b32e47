#include "tensor/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <numeric>
#include <sstream>

namespace nl {

namespace {
Backend& be(Device d) { return backend_for(d.type); }

struct GlobalRng {
  std::mutex mu;
  uint64_t seed = 0;
  uint64_t offset = 0;
};
GlobalRng& rng() {
  static GlobalRng g;
  return g;
}
}  // namespace

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> l(rng().mu);
  rng().seed = seed;
  rng().offset = 0;
}
std::pair<uint64_t, uint64_t> next_random_offset(uint64_t n) {
  std::lock_guard<std::mutex> l(rng().mu);
  uint64_t off = rng().offset;
  rng().offset += n;
  return {rng().seed, off};
}
std::pair<uint64_t, uint64_t> rng_state() {
  std::lock_guard<std::mutex> l(rng().mu);
  return {rng().seed, rng().offset};
}
void set_rng_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> l(rng().mu);
  rng().seed = seed;
  rng().offset = offset;
}

// ---------------- factories ----------------
Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  if (!device.is_cpu()) check_device(device);  // "no CUDA device: ... use --device cpu"
  const int64_t n = shape_numel(shape);  // throws on negative extents and on more than 2^63 elements
  const size_t esz = dtype_size(dtype);
  if ((uint64_t)n > (uint64_t)PTRDIFF_MAX / esz)
    throw std::invalid_argument("Tensor::empty: shape " + shape_str(shape) + " of " + dtype_name(dtype) +
                                " needs more than 2^63 bytes; no tensor can hold it (check the extents)");
  size_t nbytes = std::max<size_t>(1, (size_t)n * esz);
  return Tensor(std::make_shared<Storage>(nbytes, device), shape, contiguous_strides(shape), 0, dtype);
}
Tensor Tensor::full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  be(device).fill(t.desc(), value);
  return t;
}
Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }
Tensor Tensor::ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }
Tensor Tensor::scalar(double value, DType dtype, Device device) { return full({}, value, dtype, device); }
Tensor Tensor::arange(int64_t n, DType dtype, Device device) {
  if (n < 0) throw std::invalid_argument("Tensor::arange: n must be >= 0, got " + std::to_string(n));
  if (device.is_cpu()) {
    std::vector<double> v(n);
    std::iota(v.begin(), v.end(), 0.0);
    return Tensor::from_vector(v, {n}).to(dtype);
  }
  // On a device, made there (nothing uploaded): [0] then t[len, len + m) = t[0, m) + len, doubling len;
  // exact in int64, then converted (rounded as the host values would be).
  Tensor t = Tensor::empty({n}, DType::Int64, device);
  if (n > 0) t.slice(0, 0, 1).fill_(0.0);
  for (int64_t len = 1; len < n; len *= 2) {
    const int64_t m = std::min(len, n - len);
    be(device).unary(UnaryOp::Affine, t.slice(0, len, len + m).desc(), t.slice(0, 0, m).desc(), 1.0, (double)len);
  }
  return t.to(dtype);
}
Tensor Tensor::rand(const Shape& shape, double lo, double hi, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  auto [seed, off] = next_random_offset((uint64_t)t.numel());
  be(device).random(t.desc(), false, lo, hi, seed, off);
  return t;
}
Tensor Tensor::randn(const Shape& shape, double mean, double std, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  auto [seed, off] = next_random_offset((uint64_t)t.numel());
  be(device).random(t.desc(), true, mean, std, seed, off);
  return t;
}

Tensor Tensor::randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device) {
  if (high <= low)
    throw std::invalid_argument("Tensor::randint: high (" + std::to_string(high) + ") must exceed low (" +
                                std::to_string(low) + ")");
  const double span = (double)high - (double)low;
  if (span > 9007199254740992.0)  // 2^53
    throw std::invalid_argument("Tensor::randint: range [" + std::to_string(low) + ", " + std::to_string(high) +
                                ") is wider than 2^53; sample a narrower range");
  // Uniform doubles in (0, 1) from the same counter stream as rand(), mapped to integers on the CPU.
  Tensor u = rand(shape, 0.0, 1.0, DType::Float64, Device::cpu());
  Tensor out = empty(shape, DType::Int64, Device::cpu());
  const double* up = u.data<double>();
  int64_t* op = out.data<int64_t>();
  for (int64_t i = 0, n = u.numel(); i < n; ++i)
    op[i] = std::min<int64_t>(high - 1, low + (int64_t)std::floor(span * up[i]));
  return out.to(dtype).to(device);
}

// ---------------- metadata ----------------
int64_t Tensor::size(int64_t d) const { return shape_[wrap_dim(d, dim(), "Tensor::size")]; }

bool Tensor::is_contiguous() const {
  int64_t acc = 1;
  for (int i = dim() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[i] != acc) return false;
    acc *= shape_[i];
  }
  return true;
}

void* Tensor::raw_data() const {
  return static_cast<char*>(storage_->data()) + offset_ * (int64_t)dtype_size(dtype_);
}

Desc Tensor::desc() const {
  if (!defined()) throw std::logic_error("Tensor::desc: undefined tensor");
  if (dim() > kMaxDims)
    throw std::invalid_argument("tensor has " + std::to_string(dim()) + " dims; kernels support at most " +
                                std::to_string(kMaxDims));
  Desc d;
  d.data = raw_data();
  d.dtype = dtype_;
  d.device_index = device().index;
  d.ndim = dim();
  for (int i = 0; i < dim(); ++i) {
    d.shape[i] = shape_[i];
    d.strides[i] = strides_[i];
  }
  return d;
}

double Tensor::item() const {
  if (numel() != 1)
    throw std::invalid_argument("Tensor::item: needs one element, tensor has shape " + shape_str(shape_));
  return to_vector<double>()[0];
}

// ---------------- views ----------------
namespace {
Shape infer_shape(const Shape& shape, int64_t numel, const char* op) {
  Shape s = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) throw std::invalid_argument(std::string(op) + ": only one -1 allowed in " + shape_str(shape));
      infer = (int)i;
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known)
      throw std::invalid_argument(std::string(op) + ": cannot infer -1 in " + shape_str(shape) + " for " +
                                  std::to_string(numel) + " elements");
    s[infer] = numel / known;
  }
  if (shape_numel(s) != numel)
    throw std::invalid_argument(std::string(op) + ": shape " + shape_str(shape) + " is invalid for " +
                                std::to_string(numel) + " elements");
  return s;
}

// Strides for viewing (shape, strides) as `ns` without copying, or empty if impossible.
bool compute_view_strides(const Shape& os, const Strides& ost, const Shape& ns, Strides& out) {
  out.assign(ns.size(), 0);
  if (os.empty() || shape_numel(os) == 0) {
    out = contiguous_strides(ns);
    return true;
  }
  // Walk chunks of old dims that are contiguous among themselves.
  int64_t view_d = (int64_t)ns.size() - 1;
  int64_t chunk_base_stride = os.empty() ? 1 : ost.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = (int64_t)os.size() - 1; td >= 0; --td) {
    tensor_numel *= os[td];
    if (td == 0 || (os[td - 1] != 1 && ost[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || ns[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= ns[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (td > 0) {
        chunk_base_stride = ost[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}
}  // namespace

Tensor Tensor::view(const Shape& shape) const {
  Shape ns = infer_shape(shape, numel(), "view");
  Strides st;
  if (!compute_view_strides(shape_, strides_, ns, st))
    throw std::invalid_argument("view: shape " + shape_str(ns) + " is not compatible with the strides of a " +
                                shape_str(shape_) + " tensor; use reshape() (which copies)");
  return as_view(ns, st, offset_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape ns = infer_shape(shape, numel(), "reshape");
  Strides st;
  if (compute_view_strides(shape_, strides_, ns, st)) return as_view(ns, st, offset_);
  return contiguous().view(ns);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  if (dim() == 0) return *this;
  int a = wrap_dim(d0, dim(), "transpose"), b = wrap_dim(d1, dim(), "transpose");
  Shape s = shape_;
  Strides st = strides_;
  std::swap(s[a], s[b]);
  std::swap(st[a], st[b]);
  return as_view(s, st, offset_);
}

Tensor Tensor::permute(const std::vector<int64_t>& dims) const {
  if ((int)dims.size() != dim())
    throw std::invalid_argument("permute: got " + std::to_string(dims.size()) + " dims for a " +
                                std::to_string(dim()) + "-d tensor");
  Shape s(dim());
  Strides st(dim());
  std::vector<bool> seen(dim(), false);
  for (int i = 0; i < dim(); ++i) {
    int d = wrap_dim(dims[i], dim(), "permute");
    if (seen[d]) throw std::invalid_argument("permute: dim " + std::to_string(d) + " repeated");
    seen[d] = true;
    s[i] = shape_[d];
    st[i] = strides_[d];
  }
  return as_view(s, st, offset_);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  int a = wrap_dim(d, dim(), "slice");
  if (step <= 0) throw std::invalid_argument("slice: step must be positive");
  int64_t n = shape_[a];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape s = shape_;
  Strides st = strides_;
  s[a] = (end - start + step - 1) / step;
  st[a] = strides_[a] * step;
  return as_view(s, st, offset_ + start * strides_[a]);
}

Tensor Tensor::select(int64_t d, int64_t i) const {
  int a = wrap_dim(d, dim(), "select");
  int64_t n = shape_[a];
  if (i < -n || i >= n)
    throw std::out_of_range("select: index " + std::to_string(i) + " out of range for dim " + std::to_string(a) +
                            " of size " + std::to_string(n));
  if (i < 0) i += n;
  Shape s = shape_;
  Strides st = strides_;
  int64_t off = offset_ + i * strides_[a];
  s.erase(s.begin() + a);
  st.erase(st.begin() + a);
  return as_view(s, st, off);
}

Tensor Tensor::expand(const Shape& shape) const {
  if (shape.size() < shape_.size())
    throw std::invalid_argument("expand: cannot expand " + shape_str(shape_) + " to fewer dims " + shape_str(shape));
  size_t lead = shape.size() - shape_.size();
  Shape s(shape.size());
  Strides st(shape.size(), 0);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i < lead) {
      if (shape[i] < 0) throw std::invalid_argument("expand: -1 not allowed for new leading dims");
      s[i] = shape[i];
      continue;
    }
    int64_t cur = shape_[i - lead];
    int64_t want = shape[i] == -1 ? cur : shape[i];
    if (cur == want) {
      s[i] = cur;
      st[i] = strides_[i - lead];
    } else if (cur == 1) {
      s[i] = want;
    } else {
      throw std::invalid_argument("expand: cannot expand " + shape_str(shape_) + " to " + shape_str(shape));
    }
  }
  shape_numel(s);  // a view too must have a representable element count
  return as_view(s, st, offset_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  int a = wrap_dim(d, dim() + 1, "unsqueeze");
  Shape s = shape_;
  Strides st = strides_;
  int64_t stride = a < dim() ? strides_[a] * shape_[a] : 1;
  s.insert(s.begin() + a, 1);
  st.insert(st.begin() + a, stride);
  return as_view(s, st, offset_);
}

Tensor Tensor::squeeze(int64_t d) const {
  int a = wrap_dim(d, dim(), "squeeze");
  if (shape_[a] != 1) return *this;
  Shape s = shape_;
  Strides st = strides_;
  s.erase(s.begin() + a);
  st.erase(st.begin() + a);
  return as_view(s, st, offset_);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (dim() == 0) return reshape({1});
  int a = wrap_dim(start, dim(), "flatten"), b = wrap_dim(end, dim(), "flatten");
  if (a > b) throw std::invalid_argument("flatten: start dim after end dim");
  Shape s(shape_.begin(), shape_.begin() + a);
  int64_t m = 1;
  for (int i = a; i <= b; ++i) m *= shape_[i];
  s.push_back(m);
  s.insert(s.end(), shape_.begin() + b + 1, shape_.end());
  return reshape(s);
}

// ---------------- copies ----------------
Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_, device());
  be(device()).copy(t.desc(), desc());
  return t;
}

Tensor Tensor::to(DType dt) const {
  if (dt == dtype_) return *this;
  Tensor t = empty(shape_, dt, device());
  be(device()).copy(t.desc(), desc());
  return t;
}

Tensor Tensor::to(Device dev) const {
  if (dev == device()) return *this;
  Tensor src = contiguous();
  Tensor t = empty(shape_, dtype_, dev);
  size_t n = (size_t)numel() * dtype_size(dtype_);
  if (dev.is_cpu())
    be(src.device()).copy_to_host(t.raw_data(), src.raw_data(), n, src.device().index);
  else if (src.device().is_cpu())
    be(dev).copy_from_host(t.raw_data(), src.raw_data(), n, dev.index);
  else
    return src.to(Device::cpu()).to(dev);
  return t;
}

// ---------------- in-place ----------------
Tensor& Tensor::fill_(double value) {
  be(device()).fill(desc(), value);
  bump_version();
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src) {
  if (src.device() != device())
    throw std::invalid_argument("copy_: source on " + src.device().str() + ", destination on " + device().str());
  Tensor s = src.expand(shape_);
  be(device()).copy(desc(), s.desc());
  bump_version();
  return *this;
}

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream o;
  o << "Tensor" << shape_str(shape_) << " " << dtype_name(dtype_);
  if (!device().is_cpu()) o << " " << device().str();
  return o.str();
}

std::string Tensor::repr(int64_t max_elems) const {
  std::ostringstream o;
  if (!defined()) return "Tensor(undefined)";
  o << "Tensor(shape=" << shape_str(shape_) << ", dtype=" << dtype_name(dtype_) << ", device=" << device().str()
    << ")";
  auto v = to_vector<double>();
  o << " [";
  for (int64_t i = 0; i < (int64_t)v.size() && i < max_elems; ++i) o << (i ? ", " : "") << v[i];
  if ((int64_t)v.size() > max_elems) o << ", ...";
  o << "]";
  return o.str();
}

}  // namespace nl
