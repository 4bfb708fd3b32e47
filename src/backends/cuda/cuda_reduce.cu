// CUDA reductions over the trailing dims (sum, mean, max, min, argmax): one block per output row of a
// contiguous [outer, inner] view (a strided input is first copied contiguous). Sums accumulate in
// double like the CPU; max/min/argmax follow the CPU's rule: the first NaN wins, else the first extreme.
#include <cmath>
#include <optional>
#include <stdexcept>

#include "backends/composite/scratch.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_launch.cuh"

namespace nl::cuda {
namespace {

template <typename T>
__device__ inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return isnan(v); else return false;
}
// True when candidate (v2, i2) beats (v1, i1) under the CPU's scan order (i < 0: no candidate).
template <typename T>
__device__ inline bool better(T v2, int64_t i2, T v1, int64_t i1, bool mx) {
  if (i2 < 0) return false;
  if (i1 < 0) return true;
  const bool n1 = is_nan(v1), n2 = is_nan(v2);
  if (n1 != n2) return n2;
  if (n1 || v1 == v2) return i2 < i1;
  return mx ? v2 > v1 : v2 < v1;
}

template <typename T, typename TO>
__global__ void reduce_kernel(const T* in, TO* out, int64_t inner, ReduceOp op) {
  __shared__ double ssum[kThreads];
  __shared__ T sval[kThreads];
  __shared__ int64_t sidx[kThreads];
  const int64_t row = blockIdx.x;
  const T* x = in + row * inner;
  const int tid = threadIdx.x;
  if (op == ReduceOp::Sum || op == ReduceOp::Mean) {
    double acc = 0;
    for (int64_t i = tid; i < inner; i += blockDim.x) acc += (double)x[i];
    ssum[tid] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s) ssum[tid] += ssum[tid + s];
      __syncthreads();
    }
    if (tid == 0) {
      double r = ssum[0];
      if (op == ReduceOp::Mean) r /= (double)inner;
      out[row] = static_cast<TO>(r);
    }
    return;
  }
  const bool mx = op != ReduceOp::Min;
  T best = T(0);
  int64_t bi = -1;
  for (int64_t i = tid; i < inner; i += blockDim.x)
    if (better(x[i], i, best, bi, mx)) {
      best = x[i];
      bi = i;
    }
  sval[tid] = best;
  sidx[tid] = bi;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s && better(sval[tid + s], sidx[tid + s], sval[tid], sidx[tid], mx)) {
      sval[tid] = sval[tid + s];
      sidx[tid] = sidx[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) out[row] = op == ReduceOp::ArgMax ? static_cast<TO>(sidx[0]) : static_cast<TO>(sval[0]);
}
}  // namespace

void CudaBackend::reduce(ReduceOp op, const Desc& out, const Desc& in, int nreduce) {
  const int nouter = in.ndim - nreduce;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < nouter; ++i) outer *= in.shape[i];
  for (int i = nouter; i < in.ndim; ++i) inner *= in.shape[i];
  if (inner == 0 && (op == ReduceOp::Max || op == ReduceOp::Min || op == ReduceOp::ArgMax))
    throw std::invalid_argument("max/min/argmax over an empty dimension");
  if (outer == 0) return;
  DeviceContext& c = context(in.device_index);
  std::optional<composite::Scratch> tmp;  // only for a strided input
  const void* src = in.data;
  if (!in.contiguous()) {
    tmp.emplace(*this, in.dtype, in.device_index, std::initializer_list<int64_t>{in.numel()});
    Desc dense = in;  // in's shape, contiguous strides, in the scratch buffer
    dense.data = tmp->d().data;
    for (int64_t i = in.ndim - 1, acc = 1; i >= 0; --i) {
      dense.strides[i] = acc;
      acc *= in.shape[i];
    }
    copy(dense, in);
    src = dense.data;
  }
  int threads = 32;
  while (threads < kThreads && threads < inner) threads *= 2;
  dispatch_all(in.dtype, "reduce", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(src);
    if (op == ReduceOp::ArgMax)
      reduce_kernel<T, int64_t><<<(unsigned)outer, threads, 0, c.stream>>>(x, static_cast<int64_t*>(out.data), inner, op);
    else
      reduce_kernel<T, T><<<(unsigned)outer, threads, 0, c.stream>>>(x, static_cast<T*>(out.data), inner, op);
  });
  check_launch("reduce");
}

}  // namespace nl::cuda
