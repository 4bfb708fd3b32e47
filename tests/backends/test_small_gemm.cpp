// The small-product SGEMM grid (backends/cpu/small_gemm.h) against a float64 reference loop: every
// transpose pair, odd sizes that hit the masked columns and the short row tiles, padded leading
// dimensions and batch strides, alpha/beta (beta = 0 must overwrite NaN), and row independence (a row of
// a product equals the same row computed alone, bit for bit — incremental decoding relies on it).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "backends/cpu/small_gemm.h"
#include "backends/cpu/threads.h"
#include "test_paths.h"

using namespace nl;

namespace {
struct Case {
  bool ta, tb;
  int64_t M, N, K, batch;
  float alpha, beta;
};

// Max |C - reference| / (1 + |reference|) over all outputs of `c`, with C's initial values `c0`.
double run_case(const Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int64_t lda = (c.ta ? c.M : c.K) + 3, ldb = (c.tb ? c.K : c.N) + 5, ldc = c.N + 2;
  const int64_t sA = lda * (c.ta ? c.K : c.M) + 7, sB = ldb * (c.tb ? c.N : c.K) + 1, sC = ldc * c.M + 4;
  std::vector<float> A((size_t)(sA * c.batch)), B((size_t)(sB * c.batch)), C((size_t)(sC * c.batch));
  for (auto& x : A) x = u(rng);
  for (auto& x : B) x = u(rng);
  for (auto& x : C) x = c.beta == 0.f ? std::numeric_limits<float>::quiet_NaN() : u(rng);
  const std::vector<float> C0 = C;
  // a grid of 2 x (batch / 2) products, the outer stride spanning batch / 2 matrices
  cpu::small_sgemm_grid(c.ta, c.tb, c.M, c.N, c.K, c.alpha, {A.data(), lda, sA, sA * c.batch / 2},
                        {B.data(), ldb, sB, sB * c.batch / 2}, c.beta, C.data(), ldc, sC, sC * c.batch / 2, c.batch / 2, 2);
  double worst = 0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t j = 0; j < c.N; ++j) {
        double ref = 0;
        for (int64_t k = 0; k < c.K; ++k) {
          const double a = A[(size_t)(b * sA + (c.ta ? k * lda + i : i * lda + k))];
          const double bb = B[(size_t)(b * sB + (c.tb ? j * ldb + k : k * ldb + j))];
          ref += a * bb;
        }
        ref *= c.alpha;
        const size_t ci = (size_t)(b * sC + i * ldc + j);
        if (c.beta != 0.f) ref += (double)c.beta * C0[ci];
        worst = std::max(worst, std::fabs(C[ci] - ref) / (1.0 + std::fabs(ref)));
      }
  // The padding between rows and between matrices is never written.
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t j = c.N; j < (i + 1 < c.M ? ldc : sC - (c.M - 1) * ldc); ++j) {
        const size_t ci = (size_t)(b * sC + i * ldc + j);
        if (std::memcmp(&C[ci], &C0[ci], sizeof(float)) != 0) return 1e9;
      }
  return worst;
}
}  // namespace

TEST_CASE("small_sgemm: every transpose pair and odd sizes against a float64 loop", "[blas][small_gemm]") {
  if (!cpu::small_sgemm_fits(32, 32, 32)) {  // OpenBLAS takes these products on such builds
    std::cout << nltest::kSkipMarker << " this build has no AVX-512 small-product kernel" << std::endl;
    return;
  }
  const int64_t sizes[][3] = {{32, 32, 32}, {32, 32, 64}, {1, 1, 1}, {7, 45, 13}, {9, 17, 70}, {33, 31, 5},
                              {16, 64, 16}, {64, 64, 64}, {3, 100, 9}, {15, 33, 48}};
  unsigned seed = 1;
  for (const auto& s : sizes)
    for (int t = 0; t < 4; ++t)
      for (float beta : {0.f, 0.5f}) {
        const Case c{(t & 1) != 0, (t & 2) != 0, s[0], s[1], s[2], 4, 0.75f, beta};
        INFO("M " << c.M << " N " << c.N << " K " << c.K << " ta " << c.ta << " tb " << c.tb << " beta " << beta);
        CHECK(run_case(c, seed++) < 1e-5);
      }
}

TEST_CASE("small_sgemm: a row of a product equals that row computed alone, bit for bit", "[blas][small_gemm]") {
  if (!cpu::small_sgemm_fits(32, 32, 32)) {  // OpenBLAS takes these products on such builds
    std::cout << nltest::kSkipMarker << " this build has no AVX-512 small-product kernel" << std::endl;
    return;
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int64_t M = 21, N = 37, K = 29;
  std::vector<float> A((size_t)(M * K)), Bt((size_t)(N * K)), full((size_t)(M * N)), row((size_t)N);
  for (auto& x : A) x = u(rng);
  for (auto& x : Bt) x = u(rng);
  cpu::small_sgemm_grid(false, true, M, N, K, 0.125f, {A.data(), K, 0, 0}, {Bt.data(), K, 0, 0}, 0.f, full.data(), N, 0, 0,
                        1, 1);
  for (int64_t i = 0; i < M; ++i) {
    cpu::small_sgemm_grid(false, true, 1, N, K, 0.125f, {A.data() + i * K, K, 0, 0}, {Bt.data(), K, 0, 0}, 0.f,
                          row.data(), N, 0, 0, 1, 1);
    CHECK(std::memcmp(row.data(), full.data() + i * N, sizeof(float) * (size_t)N) == 0);
  }
}

TEST_CASE("small_sgemm: a grid split over two threads gives the one-thread result bit for bit", "[blas][small_gemm]") {
  if (!cpu::small_sgemm_fits(32, 32, 32)) {
    std::cout << nltest::kSkipMarker << " this build has no AVX-512 small-product kernel" << std::endl;
    return;
  }
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int64_t T = 32, d = 32, H = 4, B = 64;  // heads-last [B, T, H, d] operands, as the attention's
  std::vector<float> q((size_t)(B * T * H * d)), k(q.size()), c1((size_t)(B * H * T * T)), c2(c1.size());
  for (auto& x : q) x = u(rng);
  for (auto& x : k) x = u(rng);
  const int before = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    cpu::small_sgemm_grid(false, true, T, T, d, 1.f, {q.data(), H * d, d, T * H * d}, {k.data(), H * d, d, T * H * d},
                          0.f, (threads == 1 ? c1 : c2).data(), T, T * T, H * T * T, H, B);
  }
  set_num_threads(before);
  CHECK(std::memcmp(c1.data(), c2.data(), sizeof(float) * c1.size()) == 0);
  double ref = 0;  // one spot check of the values: product (b 63, h 3), row 31, column 30
  for (int64_t j = 0; j < d; ++j) ref += (double)q[(size_t)(63 * T * H * d + 31 * H * d + 3 * d + j)] * k[(size_t)(63 * T * H * d + 30 * H * d + 3 * d + j)];
  CHECK(c2[(size_t)((63 * H + 3) * T * T + 31 * T + 30)] == Approx(ref).margin(1e-5));
}

TEST_CASE("small_sgemm: sizes past its limits are refused, not computed wrongly", "[blas][small_gemm]") {
  CHECK_FALSE(cpu::small_sgemm_fits(0, 4, 4));
  CHECK_FALSE(cpu::small_sgemm_fits(4, 4, 0));
  CHECK_FALSE(cpu::small_sgemm_fits(257, 1, 1));
  CHECK_FALSE(cpu::small_sgemm_fits(65, 64, 64));
  float x = 0;
  CHECK_THROWS_AS(cpu::small_sgemm_grid(false, false, 65, 64, 64, 1.f, {&x, 64, 0, 0}, {&x, 64, 0, 0}, 0.f, &x, 64, 0, 0,
                                        1, 1),
                  std::logic_error);
}
