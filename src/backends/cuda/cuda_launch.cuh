#pragma once
// Launch helpers shared by the CUDA kernels: grid sizes, the strided operand bundle of elementwise
// kernels (coalesced on the host, backends/coalesce.h) and its per-element offset computation, and the
// dtype dispatch that throws a clear error (before any launch) for unsupported dtypes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "backends/coalesce.h"
#include "backends/cuda/cuda_context.h"
#include "backends/desc.h"

namespace nl::cuda {

constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over n elements (capped; the loop covers the rest).
inline unsigned blocks_for(int64_t n) {
  return (unsigned)std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, 65535LL * 8));
}

/// N operands of one shape, coalesced: element i of operand k sits at ptr[k] + offset_k(i) * esz[k].
template <int N>
struct Strided {
  int ndim;
  int64_t shape[kMaxDims];
  int64_t st[N][kMaxDims];
  char* ptr[N];
  int esz[N];
  bool flat;  ///< every operand contiguous with stride 1 (offsets are i)
};

template <int N>
Strided<N> make_strided(const Desc* const (&d)[N]) {
  const Coalesced<N> c = coalesce<N>(d);
  Strided<N> s;
  s.ndim = c.ndim;
  s.flat = c.ndim == 1;
  for (int i = 0; i < c.ndim; ++i) s.shape[i] = c.shape[i];
  for (int k = 0; k < N; ++k) {
    for (int i = 0; i < c.ndim; ++i) s.st[k][i] = c.st[k][i];
    s.ptr[k] = static_cast<char*>(d[k]->data);
    s.esz[k] = (int)dtype_size(d[k]->dtype);
    if (c.ndim != 1 || c.st[k][0] != 1) s.flat = false;
  }
  return s;
}

/// Pointer to element i of operand k, as T*.
template <typename T, int K, int N>
__device__ inline T* at(const Strided<N>& s, int64_t i) {
  if (s.flat) return reinterpret_cast<T*>(s.ptr[K]) + i;
  int64_t off = 0;
  for (int d = s.ndim - 1; d >= 0; --d) {
    const int64_t idx = i % s.shape[d];
    i /= s.shape[d];
    off += idx * s.st[K][d];
  }
  return reinterpret_cast<T*>(s.ptr[K]) + off;
}

/// Calls f(T{}) for float32 / float64 / int64; throws std::invalid_argument naming `op` otherwise.
template <typename F>
void dispatch_all(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Float32: f(float{}); return;
    case DType::Float64: f(double{}); return;
    case DType::Int64: f(int64_t{}); return;
    case DType::BFloat16: throw no_bf16_error(op);
  }
  throw std::invalid_argument(std::string(op) + ": unsupported dtype on cuda");
}
/// As dispatch_all for the float dtypes; int64 is an error naming `op` and the fix.
template <typename F>
void dispatch_float(DType t, const char* op, F&& f) {
  if (t == DType::Float32) return f(float{});
  if (t == DType::Float64) return f(double{});
  if (t == DType::BFloat16) throw no_bf16_error(op);
  throw std::invalid_argument(std::string(op) + ": expects a float tensor, got " + dtype_name(t) +
                              "; convert with .to(DType::Float32)");
}

}  // namespace nl::cuda
