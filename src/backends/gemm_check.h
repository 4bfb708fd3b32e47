#pragma once
// Argument checks of Backend::gemm shared by every backend: float dtypes only, and extents that fit the
// int arguments of BLAS / cuBLAS (a larger one would be truncated into a wrong or negative size).
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "tensor/dtype.h"

namespace nl {

/// Throws std::invalid_argument for an int64 dtype, or naming the extent outside [0, 2^31 - 1].
inline void check_gemm_args(DType t, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc) {
  if (t != DType::Float32 && t != DType::Float64)
    throw std::invalid_argument("matmul: expects float tensors, got " + dtype_name(t) +
                                "; convert with .to(DType::Float32)");
  const std::pair<const char*, int64_t> dims[] = {{"M", M}, {"N", N}, {"K", K}, {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}};
  for (const auto& [name, v] : dims)
    if (v < 0 || v > INT_MAX)
      throw std::invalid_argument(std::string("gemm: ") + name + " = " + std::to_string(v) +
                                  " is outside [0, 2^31 - 1], the range of BLAS's int arguments; split the product");
}

}  // namespace nl
