#pragma once
// A grid of mixed-precision products with random bfloat16 operands in padded, strided storage, and its
// check against the exact product in float64: shared by the tests of the CPU's bfloat16 product kernels
// (small_bf16_gemm.h, bf16_float32_gemm.h).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backends/backend.h"
#include "tensor/bfloat16.h"

namespace nltest {
using nl::DType;
using nl::MixedGemm;
using nl::bf16_bits_to_float;
using nl::float_to_bf16_bits;

// A grid of outer × batch products with padded rows (ld = cols + 3) and gaps between matrices, as the
// attention's heads-last views have, filled with random bfloat16 values.
struct GridCase {
  int64_t M, N, K, batch, outer;
  bool ta, tb;
  DType c;
  double alpha, beta;
  std::vector<uint16_t> a, b, c16;
  std::vector<float> c32, bias;  // bias: N values when the case has one
  bool relu = false;
  int64_t lda, ldb, ldc, sA, sB, sC, oA, oB, oC;

  GridCase(int64_t m, int64_t n, int64_t k, bool ta_, bool tb_, DType c_, double alpha_, double beta_, uint32_t seed,
           int64_t batch_ = 2, int64_t outer_ = 3)
      : M(m), N(n), K(k), batch(batch_), outer(outer_), ta(ta_), tb(tb_), c(c_), alpha(alpha_), beta(beta_) {
    const int64_t ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
    lda = ac + 3, ldb = bc + 3, ldc = N + 3;
    sA = ar * lda + 5, sB = br * ldb + 5, sC = M * ldc + 5;
    oA = sA * batch + 7, oB = sB * batch + 7, oC = sC * batch + 7;
    std::mt19937 rng(seed);
    std::normal_distribution<float> d;
    auto fill16 = [&](std::vector<uint16_t>& v, int64_t n) {
      v.resize((size_t)n);
      for (auto& x : v) x = float_to_bf16_bits(d(rng));
    };
    fill16(a, oA * outer);
    fill16(b, oB * outer);
    fill16(c16, oC * outer);
    c32.resize((size_t)(oC * outer));
    for (auto& x : c32) x = d(rng);
  }
  MixedGemm gemm() {
    MixedGemm g;
    g.c = c;
    g.M = M, g.N = N, g.K = K, g.batch = batch, g.outer = outer, g.alpha = alpha, g.beta = beta;
    g.A = {a.data(), lda, sA, oA, ta};
    g.B = {b.data(), ldb, sB, oB, tb};
    g.C = c == DType::BFloat16 ? (void*)c16.data() : (void*)c32.data();
    g.ldc = ldc, g.strideC = sC, g.outerC = oC;
    g.bias = bias.empty() ? nullptr : bias.data();
    g.relu = relu;
    return g;
  }
  double av(int64_t o, int64_t bt, int64_t i, int64_t k) const {
    return bf16_bits_to_float(a[(size_t)(o * oA + bt * sA + (ta ? k * lda + i : i * lda + k))]);
  }
  double bv(int64_t o, int64_t bt, int64_t k, int64_t j) const {
    return bf16_bits_to_float(b[(size_t)(o * oB + bt * sB + (tb ? j * ldb + k : k * ldb + j))]);
  }
  double cv(const std::vector<uint16_t>& v16, const std::vector<float>& v32, int64_t o, int64_t bt, int64_t i,
            int64_t j) const {
    const size_t at = (size_t)(o * oC + bt * sC + i * ldc + j);
    return c == DType::BFloat16 ? bf16_bits_to_float(v16[at]) : v32[at];
  }
};

// Runs gc's product with `run` (a Backend::gemm_mixed implementation) and returns the largest violation
// of |got - want| <= K 2^-23 alpha (|A| @ |B|) + 2^-23 (|beta C| + |bias|) + (bfloat16 C: 2^-8 |want|), want =
// act(alpha A·B + beta C + bias) exact in float64 (<= 0: within the bound); checks that padding between the
// rows and matrices of C is untouched.
template <class Run>
double worst_excess(GridCase& gc, Run run) {
  const std::vector<uint16_t> old16 = gc.c16;
  const std::vector<float> old32 = gc.c32;
  run(gc.gemm());
  double worst = -1.0;
  for (int64_t o = 0; o < gc.outer; ++o)
    for (int64_t bt = 0; bt < gc.batch; ++bt)
      for (int64_t i = 0; i < gc.M; ++i)
        for (int64_t j = 0; j < gc.N; ++j) {
          double exact = 0, scale = 0;
          for (int64_t k = 0; k < gc.K; ++k) {
            exact += gc.av(o, bt, i, k) * gc.bv(o, bt, k, j);
            scale += std::fabs(gc.av(o, bt, i, k) * gc.bv(o, bt, k, j));
          }
          const double oldc = gc.beta != 0.0 ? gc.cv(old16, old32, o, bt, i, j) : 0.0;
          const double bias = gc.bias.empty() ? 0.0 : gc.bias[(size_t)j];
          double want = gc.alpha * exact + gc.beta * oldc + bias;
          if (gc.relu) want = std::max(want, 0.0);
          const double bound = (double)gc.K * std::ldexp(1.0, -23) * std::fabs(gc.alpha) * scale +
                               std::ldexp(1.0, -23) * (std::fabs(gc.beta * oldc) + std::fabs(bias)) +
                               (gc.c == DType::BFloat16 ? std::ldexp(1.0, -8) * std::fabs(want) : 0.0) + 1e-30;
          worst = std::max(worst, std::fabs(gc.cv(gc.c16, gc.c32, o, bt, i, j) - want) / bound - 1.0);
        }
  // Elements of C outside the products (row padding, gaps) keep their old values.
  for (size_t at = 0; at < old32.size(); ++at) {
    const int64_t o = (int64_t)at / gc.oC, rem = (int64_t)at % gc.oC, bt = rem / gc.sC, in = rem % gc.sC;
    const bool inside = o < gc.outer && bt < gc.batch && in / gc.ldc < gc.M && in % gc.ldc < gc.N;
    if (!inside) {
      CHECK(gc.c16[at] == old16[at]);
      CHECK(gc.c32[at] == old32[at]);
    }
  }
  return worst;
}

}  // namespace nltest
