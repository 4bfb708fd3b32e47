// CUDA elementwise kernels: fill, copy/cast, unary, binary, where (any strides, broadcast operands with
// stride 0) and the counter-based random fill (the CPU's generator, backends/cpu/counter_rng.h, compiled
// for the device: same seed and offset, same numbers). One grid-stride loop per call on the device's
// stream; the scalar math is backends/elementwise_math.h, shared with the CPU.
#include <cmath>
#include <stdexcept>
#include <string>

#include "backends/cpu/counter_rng.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_launch.cuh"
#include "backends/elementwise_math.h"

namespace nl::cuda {
namespace {

template <typename T>
__global__ void fill_kernel(Strided<1> s, int64_t n, T v) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    *at<T, 0>(s, i) = v;
}
template <typename TO, typename TI>
__global__ void copy_kernel(Strided<2> s, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    *at<TO, 0>(s, i) = static_cast<TO>(*at<TI, 1>(s, i));
}
template <typename T>
__global__ void unary_kernel(Strided<2> s, int64_t n, UnaryOp op, double a, double b) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    *at<T, 0>(s, i) = unary_apply<T>(op, *at<T, 1>(s, i), a, b);
}
template <typename T>
__global__ void binary_kernel(Strided<3> s, int64_t n, BinaryOp op) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    *at<T, 0>(s, i) = binary_apply<T>(op, *at<T, 1>(s, i), *at<T, 2>(s, i));
}
template <typename T, typename C>
__global__ void where_kernel(Strided<4> s, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    *at<T, 0>(s, i) = *at<C, 1>(s, i) != C(0) ? *at<T, 2>(s, i) : *at<T, 3>(s, i);
}
template <typename T>
__global__ void random_kernel(T* o, int64_t n, bool normal, double lo, double hi, uint64_t seed, uint64_t offset) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const uint64_t c = offset + (uint64_t)i;
    if (normal) {  // Box-Muller on two independent uniforms of this counter (as the CPU)
      const double u1 = cpu::uniform01(seed, 2 * c), u2 = cpu::uniform01(seed ^ 0x5851F42D4C957F2Dull, 2 * c + 1);
      o[i] = T(cpu::add_mul_rounded(lo, hi, sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2)));
    } else {
      o[i] = T(cpu::add_mul_rounded(lo, hi - lo, cpu::uniform01(seed, c)));
    }
  }
}
}  // namespace

cudaError_t probe_kernel_image() {
  cudaFuncAttributes a;
  const cudaError_t e = cudaFuncGetAttributes(&a, fill_kernel<float>);
  cudaGetLastError();  // the caller reports it; do not leave it for the next launch check
  return e;
}

void CudaBackend::fill(const Desc& out, double value) {
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceContext& c = context(out.device_index);
  const Desc* ops[1] = {&out};
  const Strided<1> s = make_strided<1>(ops);
  dispatch_all(out.dtype, "fill", [&](auto tag) {
    using T = decltype(tag);
    fill_kernel<T><<<blocks_for(n), kThreads, 0, c.stream>>>(s, n, static_cast<T>(value));
  });
  check_launch("fill");
}

void CudaBackend::copy(const Desc& out, const Desc& in) {
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceContext& c = context(out.device_index);
  const Desc* ops[2] = {&out, &in};
  const Strided<2> s = make_strided<2>(ops);
  dispatch_all(out.dtype, "copy", [&](auto to) {
    dispatch_all(in.dtype, "copy", [&](auto ti) {
      copy_kernel<decltype(to), decltype(ti)><<<blocks_for(n), kThreads, 0, c.stream>>>(s, n);
    });
  });
  check_launch("copy");
}

void CudaBackend::unary(UnaryOp op, const Desc& out, const Desc& in, double a, double b) {
  if (!is_floating(out.dtype) && !unary_supports_int(op))
    throw std::invalid_argument("unary op " + std::to_string((int)op) + " expects a float tensor, got " +
                                dtype_name(out.dtype) + "; convert with .to(DType::Float32)");
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceContext& c = context(out.device_index);
  const Desc* ops[2] = {&out, &in};
  const Strided<2> s = make_strided<2>(ops);
  dispatch_all(out.dtype, "unary", [&](auto tag) {
    unary_kernel<decltype(tag)><<<blocks_for(n), kThreads, 0, c.stream>>>(s, n, op, a, b);
  });
  check_launch("unary");
}

void CudaBackend::binary(BinaryOp op, const Desc& out, const Desc& x, const Desc& y) {
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceContext& c = context(out.device_index);
  const Desc* ops[3] = {&out, &x, &y};
  const Strided<3> s = make_strided<3>(ops);
  dispatch_all(out.dtype, "binary", [&](auto tag) {
    binary_kernel<decltype(tag)><<<blocks_for(n), kThreads, 0, c.stream>>>(s, n, op);
  });
  check_launch("binary");
}

void CudaBackend::where(const Desc& out, const Desc& cond, const Desc& x, const Desc& y) {
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceContext& c = context(out.device_index);
  const Desc* ops[4] = {&out, &cond, &x, &y};
  const Strided<4> s = make_strided<4>(ops);
  dispatch_all(out.dtype, "where", [&](auto tag) {
    dispatch_all(cond.dtype, "where", [&](auto ctag) {
      where_kernel<decltype(tag), decltype(ctag)><<<blocks_for(n), kThreads, 0, c.stream>>>(s, n);
    });
  });
  check_launch("where");
}

void CudaBackend::random(const Desc& out, bool normal, double lo, double hi, uint64_t seed, uint64_t offset) {
  if (!out.contiguous()) throw std::invalid_argument("random: output must be contiguous");
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceContext& c = context(out.device_index);
  dispatch_float(out.dtype, "random", [&](auto tag) {
    using T = decltype(tag);
    random_kernel<T><<<blocks_for(n), kThreads, 0, c.stream>>>(static_cast<T*>(out.data), n, normal, lo, hi, seed,
                                                                offset);
  });
  check_launch("random");
}

}  // namespace nl::cuda
