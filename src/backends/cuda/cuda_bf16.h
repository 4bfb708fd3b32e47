#pragma once
// bfloat16 kernels of the CUDA backend (cuda_bf16.cu): the casts to and from bfloat16 and the bfloat16
// fill, which CudaBackend::copy / fill hand over to, and the bias + ReLU epilogue of the mixed-precision
// products (cuda_bf16_blas.cpp). The conversions are tensor/bfloat16.h's, so a cast gives the CPU's bits.
#include <cstdint>

#include "backends/backend.h"
#include "backends/cuda/cuda_context.h"

namespace nl::cuda {

/// out = in converted (either side bfloat16, the other float32, float64, int64 or bfloat16; any strides;
/// same shape), on the device's stream.
void copy_bf16(DeviceContext& c, const Desc& out, const Desc& in);
/// Fills a bfloat16 view with `value` rounded once to nearest even.
void fill_bf16(DeviceContext& c, const Desc& out, double value);
/// C(o, b) = act(C(o, b) + bias) over g's grid (float32 or bfloat16 C): the epilogue of gemm_mixed.
void mixed_gemm_epilogue(DeviceContext& c, const MixedGemm& g);

}  // namespace nl::cuda
