// normlab's small mixed-precision product kernel (backends/cpu/small_bf16_gemm.h): every transposition,
// odd and tiny sizes, strided grids, alpha, beta and both result dtypes against the exact product of the
// bfloat16 operands; what it takes and refuses; its results do not depend on the thread count.
#include <catch2/catch.hpp>

#include <cmath>
#include <iostream>
#include <random>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_features.h"
#include "backends/cpu/small_bf16_gemm.h"
#include "backends/cpu/threads.h"
#include "bf16_test_util.h"
#include "tensor/bfloat16.h"

using namespace nl;
using Catch::Matchers::Contains;

namespace {

bool skip_without_avx512_bf16() {
  if (cpu::cpu_features().avx512_bf16) return false;
  std::cout << nltest::kSkipMarker << " this CPU has no AVX512_BF16 (the small bfloat16 kernel does not run)"
            << std::endl;
  return true;
}

// A grid of outer × batch products with padded rows (ld = cols + 3) and gaps between matrices, as the
// attention's heads-last views have, filled with random bfloat16 values.
struct GridCase {
  int64_t M, N, K, batch, outer;
  bool ta, tb;
  DType c;
  double alpha, beta;
  std::vector<uint16_t> a, b, c16;
  std::vector<float> c32;
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

// Runs g's product on a copy of its C and returns the largest violation of
// |got - want| <= K 2^-23 alpha (|A| @ |B|) + 2^-23 |beta C| + (bfloat16 C: 2^-8 |want|), want exact in float64
// (<= 0: within the bound), and that padding between the rows and matrices of C is untouched.
double worst_excess(GridCase& gc) {
  const std::vector<uint16_t> old16 = gc.c16;
  const std::vector<float> old32 = gc.c32;
  cpu::small_bf16_gemm_grid(gc.gemm());
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
          const double want = gc.alpha * exact + gc.beta * oldc;
          const double bound = (double)gc.K * std::ldexp(1.0, -23) * std::fabs(gc.alpha) * scale +
                               std::ldexp(1.0, -23) * std::fabs(gc.beta * oldc) +
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

}  // namespace

TEST_CASE("small bf16 gemm: every transposition, odd sizes, alpha, beta and both result dtypes equal the exact "
          "product of the bfloat16 operands within float32 accumulation error",
          "[bf16][gemm]") {
  if (skip_without_avx512_bf16()) return;
  struct Size {
    int64_t M, N, K;
  };
  // the attention's 32³ head; 1 x 1 x 1; odd K (a zero-padded pair); N <= 16 (one vector), 17-32, > 32 (two
  // strips); M not a multiple of the 8-row tile; K > 32 (more than one 16 x 16 transposed block).
  const Size sizes[] = {{32, 32, 32}, {1, 1, 1}, {7, 5, 3}, {9, 16, 17}, {17, 40, 33}, {64, 64, 64}, {13, 33, 50}};
  uint32_t seed = 1;
  for (const Size& s : sizes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (DType c : {DType::Float32, DType::BFloat16})
          for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{0.125, 0.5}}) {
            INFO("M " << s.M << " N " << s.N << " K " << s.K << " ta " << ta << " tb " << tb << " C "
                      << dtype_name(c) << " alpha " << alpha << " beta " << beta);
            GridCase gc(s.M, s.N, s.K, ta, tb, c, alpha, beta, seed++);
            REQUIRE(cpu::small_bf16_gemm_fits(gc.gemm()));
            CHECK(worst_excess(gc) <= 0.0);
          }
}

TEST_CASE("small bf16 gemm: gemm_mixed sends the attention's head products to it, and it refuses what it does "
          "not take",
          "[bf16][gemm]") {
  if (skip_without_avx512_bf16()) return;
  NL_SKIP_WITHOUT_ONEDNN();
  GridCase head(32, 32, 32, false, true, DType::Float32, 0.17, 0.0, 7);
  CHECK_THAT(cpu::bf16_gemm_impl(head.gemm()), Contains("small-product kernel"));
  {  // the emulated path (NORMLAB_BF16_FALLBACK) does not take it
    nltest::EnvGuard g("NORMLAB_BF16_FALLBACK", "1");
    CHECK_THAT(cpu::bf16_gemm_impl(head.gemm()), Contains("fallback"));
  }
  MixedGemm g = head.gemm();
  const std::vector<float> bias(32, 1.0f);
  g.bias = bias.data();
  CHECK_FALSE(cpu::small_bf16_gemm_fits(g));  // bias and ReLU are oneDNN's post-ops
  CHECK_THROWS_WITH(cpu::small_bf16_gemm_grid(g), Contains("not a small bfloat16 product"));
  g = head.gemm();
  g.relu = true;
  CHECK_FALSE(cpu::small_bf16_gemm_fits(g));
  g = head.gemm();
  g.M = 65, g.N = 64, g.K = 64;  // more than 64³ multiply-adds
  CHECK_FALSE(cpu::small_bf16_gemm_fits(g));
  g.M = 257, g.N = 1, g.K = 1;
  CHECK_FALSE(cpu::small_bf16_gemm_fits(g));
}

TEST_CASE("small bf16 gemm: the result does not depend on the thread count", "[bf16][gemm][threads2]") {
  if (skip_without_avx512_bf16()) return;
  const int before = get_num_threads();
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    GridCase gc(32, 32, 32, true, false, DType::Float32, 1.0, 0.0, 11, 4, 64);  // split over threads
    cpu::small_bf16_gemm_grid(gc.gemm());
    results.push_back(gc.c32);
  }
  set_num_threads(before);
  CHECK(results[0] == results[1]);
}
