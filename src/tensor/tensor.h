#pragma once
// Tensor: a value type sharing a Storage, with shape, strides (elements) and offset. Views (reshape,
// transpose, permute, slice, expand) share storage; contiguous() copies only when needed.
// Compute ops are free functions in tensor/ops.h; this header holds construction, views and access.
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "tensor/device.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"
#include "tensor/storage.h"

namespace nl {

/// An n-d array (float32, float64, int64 or bfloat16) on a device; copies are cheap handles sharing storage.
/// Throws std::invalid_argument on bad shapes/indices and std::logic_error on undefined tensors.
class Tensor {
 public:
  /// An undefined tensor (defined() == false).
  Tensor() = default;

  // ---- factories ----
  /// Uninitialised contiguous tensor of `shape`. Throws std::invalid_argument naming the shape if an
  /// extent is negative or the shape has more than 2^63 elements (or bytes); std::runtime_error when
  /// the allocation fails.
  static Tensor empty(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
  /// Tensor of `shape` filled with 0; throws as empty().
  static Tensor zeros(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
  /// Tensor of `shape` filled with 1; throws as empty().
  static Tensor ones(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
  /// Tensor of `shape` filled with `value` (converted to dtype); throws as empty().
  static Tensor full(const Shape& shape, double value, DType dtype = DType::Float32,
                     Device device = Device::cpu());
  /// 0-d tensor holding `value`.
  static Tensor scalar(double value, DType dtype = DType::Float32, Device device = Device::cpu());
  /// Copies `values` (row-major) into a new CPU tensor of `shape`; throws if sizes differ.
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);
  /// [0, 1, ..., n-1]; throws std::invalid_argument if n < 0.
  static Tensor arange(int64_t n, DType dtype = DType::Float32, Device device = Device::cpu());
  /// Uniform [lo, hi) from the global generator (see manual_seed).
  static Tensor rand(const Shape& shape, double lo = 0, double hi = 1, DType dtype = DType::Float32,
                     Device device = Device::cpu());
  /// Normal(mean, std) from the global generator.
  static Tensor randn(const Shape& shape, double mean = 0, double std = 1, DType dtype = DType::Float32,
                      Device device = Device::cpu());
  /// Integers drawn uniformly from [low, high) by the global generator (as torch.randint; int64 by
  /// default). Consumes numel() numbers of the generator like rand(). Throws std::invalid_argument
  /// if high <= low or high - low > 2^53 (beyond that a double cannot map uniformly to integers).
  static Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::Int64,
                        Device device = Device::cpu());

  // ---- metadata ----
  /// False for a default-constructed tensor.
  bool defined() const { return storage_ != nullptr; }
  /// Extents, outermost first.
  const Shape& shape() const { return shape_; }
  /// Strides in elements (not bytes), one per dim.
  const Strides& strides() const { return strides_; }
  /// Offset of the first element into the storage, in elements.
  int64_t offset() const { return offset_; }
  /// Number of dims (0 for a scalar).
  int dim() const { return (int)shape_.size(); }
  /// Extent of dim `d` (negative counts from the end).
  int64_t size(int64_t d) const;
  /// Number of elements (product of the extents).
  int64_t numel() const { return shape_numel(shape_); }
  /// Element type.
  DType dtype() const { return dtype_; }
  /// Device of the storage (cpu for an undefined tensor).
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  /// True if the elements are laid out row-major without gaps (dims of extent 1 ignored).
  bool is_contiguous() const;
  /// The shared storage (null for an undefined tensor).
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  /// Version of the underlying storage (bumped by in-place writes).
  uint64_t version() const { return storage_ ? storage_->version() : 0; }
  /// Marks the storage as written in place (autograd checks saved tensors against it).
  void bump_version() const {
    if (storage_) storage_->bump_version();
  }
  /// True if both share the same storage.
  bool is_alias_of(const Tensor& o) const { return storage_ && storage_ == o.storage_; }
  /// Kernel descriptor of this view; throws if dim() > kMaxDims.
  Desc desc() const;

  // ---- element access (CPU only) ----
  /// Typed pointer to the first element; throws if T does not match dtype or tensor is not on cpu.
  template <typename T> T* data() const;
  /// Value of a one-element tensor as double (copies from device if needed).
  double item() const;
  /// Copy of all elements in row-major order, converted to T.
  template <typename T> std::vector<T> to_vector() const;

  // ---- views (share storage) ----
  /// Same data with a new shape (one -1 allowed); copies first if not viewable.
  Tensor reshape(const Shape& shape) const;
  /// Like reshape but throws if a copy would be needed.
  Tensor view(const Shape& shape) const;
  /// Swaps dims d0 and d1 (negative dims wrap); throws std::out_of_range on a bad dim.
  Tensor transpose(int64_t d0, int64_t d1) const;
  /// Reorders the dims: result dim i is this tensor's dim dims[i]; throws on a repeated or bad dim.
  Tensor permute(const std::vector<int64_t>& dims) const;
  /// Elements [start, end) with `step` along `dim` (negative indices wrap; end clamps).
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  /// Index `i` along `dim`, dropping that dim.
  Tensor select(int64_t dim, int64_t i) const;
  /// Broadcast view to `shape` (stride 0 on expanded dims); -1 keeps a dim. Throws
  /// std::invalid_argument if a non-1 extent would change or the result has more than 2^63 elements.
  Tensor expand(const Shape& shape) const;
  /// Inserts a dim of extent 1 at `dim` (in [-(dim()+1), dim()]).
  Tensor unsqueeze(int64_t dim) const;
  /// Removes `dim` if its extent is 1 (otherwise returns this tensor unchanged).
  Tensor squeeze(int64_t dim) const;
  /// Merges dims [start, end] into one.
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;

  // ---- copies ----
  /// Contiguous version (this tensor itself if already contiguous).
  Tensor contiguous() const;
  /// Contiguous deep copy.
  Tensor clone() const;
  /// Converted copy (this tensor itself if the dtype matches).
  Tensor to(DType dtype) const;
  /// Copy on another device (this tensor itself if already there).
  Tensor to(Device device) const;

  // ---- in-place (bump the version counter) ----
  /// Sets every element of this view to `value` (converted to dtype).
  Tensor& fill_(double value);
  /// Sets every element of this view to 0.
  Tensor& zero_() { return fill_(0.0); }
  /// Copies `src` (broadcast to this shape, dtype converted) into this view.
  Tensor& copy_(const Tensor& src);

  /// Short one-line description: "Tensor[2, 3] float32" (device appended when not cpu:
  /// "Tensor[2, 3] float32 cuda:0"; "Tensor(undefined)" for an undefined tensor). Like Module::str().
  std::string str() const;
  /// Full print: shape, dtype, device and the first `max_elems` values in row-major order
  /// ("Tensor(shape=[2], dtype=float32, device=cpu) [1, 2]"). Like Module::repr(); copies from the device.
  std::string repr(int64_t max_elems = 64) const;

 private:
  Tensor(std::shared_ptr<Storage> s, Shape shape, Strides strides, int64_t offset, DType dt)
      : storage_(std::move(s)), shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset),
        dtype_(dt) {}
  Tensor as_view(Shape shape, Strides strides, int64_t offset) const {
    return Tensor(storage_, std::move(shape), std::move(strides), offset, dtype_);
  }
  void* raw_data() const;

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::Float32;
};

/// Seeds the global random generator used by rand/randn/dropout/init (default seed 0).
void manual_seed(uint64_t seed);
/// Reserves `n` numbers from the global generator; returns (seed, offset) for a counter-based kernel.
std::pair<uint64_t, uint64_t> next_random_offset(uint64_t n);
/// State of the global generator (seed, offset) for checkpoints; set_rng_state restores it.
std::pair<uint64_t, uint64_t> rng_state();
/// Restores a state returned by rng_state().
void set_rng_state(uint64_t seed, uint64_t offset);

// ---- template definitions ----
template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  if ((int64_t)values.size() != shape_numel(shape))
    throw std::invalid_argument("Tensor::from_vector: " + std::to_string(values.size()) +
                                " values do not fill shape " + shape_str(shape));
  Tensor t = empty(shape, dtype_of<T>::value);
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

template <typename T> T* Tensor::data() const {
  if (!defined()) throw std::logic_error("Tensor::data: undefined tensor");
  if (dtype_of<T>::value != dtype_)
    throw std::invalid_argument("Tensor::data: tensor is " + dtype_name(dtype_) + ", asked for " +
                                dtype_name(dtype_of<T>::value));
  if (!device().is_cpu()) throw std::invalid_argument("Tensor::data: tensor is on " + device().str() + "; call .to(Device::cpu()) first");
  return static_cast<T*>(raw_data());
}

template <typename T> std::vector<T> Tensor::to_vector() const {
  Tensor c = to(Device::cpu()).contiguous();
  std::vector<T> out(c.numel());
  if (c.dtype() == DType::BFloat16) {  // widened exactly to float32, then converted like a float32 value
    const bfloat16* p = c.data<bfloat16>();
    for (int64_t i = 0, n = (int64_t)out.size(); i < n; ++i) out[i] = static_cast<T>(static_cast<float>(p[i]));
    return out;
  }
  dispatch_dtype(c.dtype(), "to_vector", [&](auto v) {
    using S = decltype(v);
    const S* p = c.data<S>();
    for (int64_t i = 0, n = (int64_t)out.size(); i < n; ++i) out[i] = static_cast<T>(p[i]);
  });
  return out;
}

}  // namespace nl
