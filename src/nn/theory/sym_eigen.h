#pragma once
// A small dense symmetric eigensolver (cyclic Jacobi), enough for the scatter matrices of LSSR (ssr.h).
#include <cstdint>
#include <vector>

namespace nl::lntheory {

/// Eigendecomposition of a symmetric n x n matrix (row-major) by cyclic Jacobi rotations:
/// A = V diag(values) V^T, the columns of V (row-major n x n) the eigenvectors. Throws
/// std::invalid_argument if A is not n x n or not symmetric (to 1e-9 relative).
struct SymEigen {
  std::vector<double> values, vectors;
};
SymEigen sym_eigen(const std::vector<double>& A, int64_t n);

}  // namespace nl::lntheory
