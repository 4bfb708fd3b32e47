#pragma once
// Helpers of the CUDA row kernels (one block per row): block-wide sum / max in double, the block size
// for a row length, row/column counts of a Desc, and the grid-stride loop macro.
#include <cstdint>

#include "backends/cuda/cuda_launch.cuh"

namespace nl::cuda {

/// for (i = global thread index; i < n; i += total threads)
#define NL_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

// Block-wide sum / max of one value per thread (blockDim.x a power of two <= kThreads); every thread
// gets the result.
__device__ inline double block_sum(double v) {
  __shared__ double sh[kThreads];
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  const double r = sh[0];
  __syncthreads();
  return r;
}
__device__ inline double block_max(double v) {
  __shared__ double sh[kThreads];
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] = fmax(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  const double r = sh[0];
  __syncthreads();
  return r;
}
// Threads per row block: a power of two in [32, kThreads] covering `cols` when it can.
inline int row_threads(int64_t cols) {
  int t = 32;
  while (t < kThreads && t < cols) t *= 2;
  return t;
}
inline int64_t rows_of(const Desc& d) {
  int64_t r = 1;
  for (int i = 0; i + 1 < d.ndim; ++i) r *= d.shape[i];
  return r;
}
inline int64_t cols_of(const Desc& d) { return d.ndim ? d.shape[d.ndim - 1] : 1; }

}  // namespace nl::cuda
