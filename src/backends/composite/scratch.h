#pragma once
// Helpers of the composite kernels: Desc views with explicit shape/strides, and Scratch, a contiguous
// buffer from a backend's allocator that is returned when it goes out of scope.
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "backends/backend.h"

namespace nl::composite {

/// View of `base`'s memory (same dtype/device) starting `offset` elements in, with the given shape and
/// strides (elements); throws std::invalid_argument when the ranks differ or exceed kMaxDims.
Desc view(const Desc& base, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides,
          int64_t offset = 0);
/// `base` (contiguous) reshaped to `shape` (same element count assumed, not checked).
Desc reshaped(const Desc& base, std::initializer_list<int64_t> shape);
/// `like`'s shape with contiguous row-major strides, over `data` in `dtype` (same device): where a strided
/// view is copied to be read densely (or widened, e.g. bfloat16 into float32).
Desc dense_like(const Desc& like, void* data, DType dtype);
/// Product of all dims but the last (rows) and the last dim (cols; 1 for a 0-d view).
int64_t rows_of(const Desc& d);
int64_t cols_of(const Desc& d);

/// A contiguous buffer of `shape` on device `device_index` of `be`, freed (to the cache) by the destructor.
class Scratch {
 public:
  Scratch(Backend& be, DType t, int device_index, std::initializer_list<int64_t> shape);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  /// The whole buffer as a contiguous Desc.
  const Desc& d() const { return d_; }
  /// The buffer seen through shape/strides (e.g. stride 0 to broadcast a per-row value over columns).
  Desc as(std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides) const {
    return view(d_, shape, strides);
  }

 private:
  Backend& be_;
  Desc d_;
  size_t nbytes_;
};

/// Copies `n` int64 values of contiguous `d` (any device of `be`) to the host.
std::vector<int64_t> download_i64(Backend& be, const Desc& d);
/// Copies host values into contiguous `d` (dtype must match T: the caller ensures it).
template <typename T>
void upload(Backend& be, const Desc& d, const std::vector<T>& v) {
  be.copy_from_host(d.data, v.data(), v.size() * sizeof(T), d.device_index);
}

/// d[i] = start + i * step for a contiguous 1-d `d`, made on the device from a fill and log2(n) affine
/// copies of the filled prefix (no table from the host). Exact for int64 and for small integers in floats.
void iota(Backend& be, const Desc& d, double start, double step);

}  // namespace nl::composite
