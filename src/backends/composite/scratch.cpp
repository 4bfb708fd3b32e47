#include "backends/composite/scratch.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nl::composite {

Desc view(const Desc& base, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides,
          int64_t offset) {
  if (shape.size() != strides.size() || shape.size() > (size_t)kMaxDims)
    throw std::invalid_argument("composite view: " + std::to_string(shape.size()) + " extents but " +
                                std::to_string(strides.size()) + " strides (at most " + std::to_string(kMaxDims) +
                                " dims)");
  Desc d = base;
  d.data = static_cast<char*>(base.data) + offset * (int64_t)dtype_size(base.dtype);
  d.ndim = (int)shape.size();
  std::copy(shape.begin(), shape.end(), d.shape);
  std::copy(strides.begin(), strides.end(), d.strides);
  return d;
}

Desc reshaped(const Desc& base, std::initializer_list<int64_t> shape) {
  Desc d = base;
  d.ndim = (int)shape.size();
  std::copy(shape.begin(), shape.end(), d.shape);
  return dense_like(d, base.data, base.dtype);
}

Desc dense_like(const Desc& like, void* data, DType dtype) {
  Desc d = like;
  d.data = data;
  d.dtype = dtype;
  for (int64_t i = d.ndim - 1, acc = 1; i >= 0; --i) {
    d.strides[i] = acc;
    acc *= d.shape[i];
  }
  return d;
}

int64_t rows_of(const Desc& d) {
  int64_t r = 1;
  for (int i = 0; i + 1 < d.ndim; ++i) r *= d.shape[i];
  return r;
}
int64_t cols_of(const Desc& d) { return d.ndim ? d.shape[d.ndim - 1] : 1; }

Scratch::Scratch(Backend& be, DType t, int device_index, std::initializer_list<int64_t> shape) : be_(be) {
  d_.dtype = t;
  d_.device_index = device_index;
  d_ = reshaped(d_, shape);
  nbytes_ = std::max<size_t>(1, (size_t)d_.numel() * dtype_size(t));
  d_.data = be_.allocate(nbytes_, device_index);
}
Scratch::~Scratch() { be_.deallocate(d_.data, nbytes_, d_.device_index); }

std::vector<int64_t> download_i64(Backend& be, const Desc& d) {
  std::vector<int64_t> v((size_t)d.numel());
  if (!v.empty()) be.copy_to_host(v.data(), d.data, v.size() * sizeof(int64_t), d.device_index);
  return v;
}

void iota(Backend& be, const Desc& d, double start, double step) {
  const int64_t n = d.numel();
  if (n == 0) return;
  be.fill(view(d, {1}, {1}), start);
  for (int64_t len = 1; len < n; len *= 2) {  // d[len, len + m) = d[0, m) + len * step
    const int64_t m = std::min(len, n - len);
    be.unary(UnaryOp::Affine, view(d, {m}, {1}, len), view(d, {m}, {1}), 1.0, step * (double)len);
  }
}

}  // namespace nl::composite
