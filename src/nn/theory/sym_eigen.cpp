// Cyclic Jacobi eigendecomposition (Golub & Van Loan, Matrix Computations, §8.5); see sym_eigen.h.
#include "nn/theory/sym_eigen.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace nl::lntheory {

SymEigen sym_eigen(const std::vector<double>& A0, int64_t n) {
  if (n < 1 || (int64_t)A0.size() != n * n)
    throw std::invalid_argument("sym_eigen: expected an n x n matrix with n >= 1 (" + std::to_string(n * n) +
                                " entries), got " + std::to_string(A0.size()) + " entries");
  double scale = 0;
  for (double v : A0) scale = std::max(scale, std::fabs(v));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j)
      if (std::fabs(A0[i * n + j] - A0[j * n + i]) > 1e-9 * std::max(1.0, scale))
        throw std::invalid_argument("sym_eigen: the matrix is not symmetric (entry " + std::to_string(i) + "," +
                                    std::to_string(j) + "); pass a symmetric matrix");
  std::vector<double> A = A0, V((size_t)(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) V[i * n + i] = 1.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += A[p * n + q] * A[p * n + q];
    if (off <= 1e-30 * std::max(1e-300, scale * scale)) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const double apq = A[p * n + q];
        if (apq == 0) continue;
        const double theta = (A[q * n + q] - A[p * n + p]) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // A <- A J (columns p, q)
          const double akp = A[k * n + p], akq = A[k * n + q];
          A[k * n + p] = c * akp - s * akq;
          A[k * n + q] = s * akp + c * akq;
        }
        for (int64_t k = 0; k < n; ++k) {  // A <- J^T A (rows p, q)
          const double apk = A[p * n + k], aqk = A[q * n + k];
          A[p * n + k] = c * apk - s * aqk;
          A[q * n + k] = s * apk + c * aqk;
        }
        for (int64_t k = 0; k < n; ++k) {  // V <- V J
          const double vkp = V[k * n + p], vkq = V[k * n + q];
          V[k * n + p] = c * vkp - s * vkq;
          V[k * n + q] = s * vkp + c * vkq;
        }
      }
  }
  SymEigen out;
  out.values.resize((size_t)n);
  for (int64_t i = 0; i < n; ++i) out.values[(size_t)i] = A[i * n + i];
  out.vectors = std::move(V);
  return out;
}

}  // namespace nl::lntheory
