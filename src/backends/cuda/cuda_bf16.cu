// bfloat16 casts, fill and the mixed-precision products' epilogue on the GPU (cuda_bf16.h). Grid-stride
// loops on the device's stream, as cuda_elementwise.cu; bfloat16 values are handled as their uint16 bits.
#include <stdexcept>
#include <string>

#include "backends/cuda/cuda_bf16.h"
#include "backends/cuda/cuda_launch.cuh"
#include "tensor/bfloat16.h"

namespace nl::cuda {
namespace {

// Element conversions to and from bfloat16 bits (float64 and int64 round once, through double).
template <typename T> __device__ inline uint16_t to_bf16(T x) { return double_to_bf16_bits((double)x); }
template <> __device__ inline uint16_t to_bf16<float>(float x) { return float_to_bf16_bits(x); }
template <> __device__ inline uint16_t to_bf16<uint16_t>(uint16_t x) { return x; }
template <typename T> __device__ inline T from_bf16(uint16_t b) { return static_cast<T>(bf16_bits_to_float(b)); }

template <typename TI>
__global__ void to_bf16_kernel(Strided<2> s, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    *at<uint16_t, 0>(s, i) = to_bf16<TI>(*at<TI, 1>(s, i));
}
template <typename TO>
__global__ void from_bf16_kernel(Strided<2> s, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    *at<TO, 0>(s, i) = from_bf16<TO>(*at<uint16_t, 1>(s, i));
}
__global__ void fill_bf16_kernel(Strided<1> s, int64_t n, uint16_t v) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    *at<uint16_t, 0>(s, i) = v;
}

// One thread per element of the outer × batch × M × N grid of results.
template <typename T>
__global__ void epilogue_kernel(T* C, int64_t M, int64_t N, int64_t ldc, int64_t sC, int64_t oC, int64_t batch,
                                int64_t total, const float* bias, bool relu) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t n = i % N, m = (i / N) % M, b = (i / (N * M)) % batch, o = i / (N * M * batch);
    T* p = C + o * oC + b * sC + m * ldc + n;
    float v;
    if constexpr (sizeof(T) == 2) v = bf16_bits_to_float(*p); else v = *p;
    if (bias) v += bias[n];
    if (relu) v = v < 0.0f ? 0.0f : v;  // NaN stays NaN (as the CPU, PyTorch)
    if constexpr (sizeof(T) == 2) *p = float_to_bf16_bits(v); else *p = v;
  }
}

}  // namespace

void copy_bf16(DeviceContext& c, const Desc& out, const Desc& in) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const Desc* ops[2] = {&out, &in};
  const Strided<2> s = make_strided<2>(ops);
  if (out.dtype == DType::BFloat16 && in.dtype == DType::BFloat16) {
    to_bf16_kernel<uint16_t><<<blocks_for(n), kThreads, 0, c.stream>>>(s, n);
  } else if (out.dtype == DType::BFloat16) {
    dispatch_all(in.dtype, "copy to bfloat16", [&](auto tag) {
      to_bf16_kernel<decltype(tag)><<<blocks_for(n), kThreads, 0, c.stream>>>(s, n);
    });
  } else {
    dispatch_all(out.dtype, "copy from bfloat16", [&](auto tag) {
      from_bf16_kernel<decltype(tag)><<<blocks_for(n), kThreads, 0, c.stream>>>(s, n);
    });
  }
  check_launch("copy (bfloat16)");
}

void fill_bf16(DeviceContext& c, const Desc& out, double value) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const Desc* ops[1] = {&out};
  fill_bf16_kernel<<<blocks_for(n), kThreads, 0, c.stream>>>(make_strided<1>(ops), n, double_to_bf16_bits(value));
  check_launch("fill (bfloat16)");
}

void mixed_gemm_epilogue(DeviceContext& c, const MixedGemm& g) {
  if (!g.bias && !g.relu) return;
  const int64_t total = g.outer * g.batch * g.M * g.N;
  if (total == 0) return;
  if (g.c == DType::BFloat16)
    epilogue_kernel<uint16_t><<<blocks_for(total), kThreads, 0, c.stream>>>(
        static_cast<uint16_t*>(g.C), g.M, g.N, g.ldc, g.strideC, g.outerC, g.batch, total, g.bias, g.relu);
  else
    epilogue_kernel<float><<<blocks_for(total), kThreads, 0, c.stream>>>(
        static_cast<float*>(g.C), g.M, g.N, g.ldc, g.strideC, g.outerC, g.batch, total, g.bias, g.relu);
  check_launch("gemm_mixed epilogue (bias, relu)");
}

}  // namespace nl::cuda
