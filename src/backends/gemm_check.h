#pragma once
// Argument checks of Backend::gemm and Backend::gemm_mixed shared by every backend: the dtypes each
// takes, and extents that fit the int arguments of BLAS / cuBLAS / oneDNN (a larger one would be
// truncated into a wrong or negative size).
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "backends/backend.h"
#include "tensor/dtype.h"

namespace nl {

/// Throws std::invalid_argument for an int64 or bfloat16 dtype, or naming the extent outside [0, 2^31 - 1].
inline void check_gemm_args(DType t, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc) {
  if (t == DType::BFloat16)
    throw std::invalid_argument("gemm: takes float32 or float64 operands; bfloat16 products go through "
                                "Backend::gemm_mixed (matmul on bfloat16 tensors)");
  if (t != DType::Float32 && t != DType::Float64)
    throw std::invalid_argument("matmul: expects float tensors, got " + dtype_name(t) +
                                "; convert with .to(DType::Float32)");
  const std::pair<const char*, int64_t> dims[] = {{"M", M}, {"N", N}, {"K", K}, {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}};
  for (const auto& [name, v] : dims)
    if (v < 0 || v > INT_MAX)
      throw std::invalid_argument(std::string("gemm: ") + name + " = " + std::to_string(v) +
                                  " is outside [0, 2^31 - 1], the range of BLAS's int arguments; split the product");
}

/// Throws std::invalid_argument unless g has bfloat16 operands, a float32 or bfloat16 result, extents
/// (M, N, K, batch, outer, leading dims) in [0, 2^31 - 1] and non-overlapping results (non-zero C steps
/// along grid axes longer than 1).
inline void check_mixed_gemm_args(const MixedGemm& g) {
  if (g.ab != DType::BFloat16)
    throw std::invalid_argument("gemm_mixed: operands must be bfloat16, got " + dtype_name(g.ab));
  if (g.c != DType::Float32 && g.c != DType::BFloat16)
    throw std::invalid_argument("gemm_mixed: the result must be float32 or bfloat16, got " + dtype_name(g.c));
  const std::pair<const char*, int64_t> dims[] = {{"M", g.M},         {"N", g.N},        {"K", g.K},
                                                  {"batch", g.batch}, {"outer", g.outer}, {"lda", g.A.ld},
                                                  {"ldb", g.B.ld},    {"ldc", g.ldc}};
  for (const auto& [name, v] : dims)
    if (v < 0 || v > INT_MAX)
      throw std::invalid_argument(std::string("gemm_mixed: ") + name + " = " + std::to_string(v) +
                                  " is outside [0, 2^31 - 1], the range of the libraries' int arguments; split "
                                  "the product");
  if ((g.batch > 1 && g.strideC == 0) || (g.outer > 1 && g.outerC == 0))
    throw std::invalid_argument("gemm_mixed: the results of a grid must not overlap (C's batch and outer steps "
                                "must be non-zero)");
}

}  // namespace nl
