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
#include "bf16_grid_case.h"
#include "bf16_test_util.h"
#include "tensor/bfloat16.h"

using namespace nl;
using nltest::GridCase;
using nltest::worst_excess;
using Catch::Matchers::Contains;

namespace {

bool skip_without_avx512_bf16() {
  if (cpu::cpu_features().avx512_bf16) return false;
  std::cout << nltest::kSkipMarker << " this CPU has no AVX512_BF16 (the small bfloat16 kernel does not run)"
            << std::endl;
  return true;
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
            CHECK(worst_excess(gc, cpu::small_bf16_gemm_grid) <= 0.0);
          }
}

TEST_CASE("small bf16 gemm: gemm_mixed sends the attention's head products to it, and it refuses what it does "
          "not take",
          "[bf16][gemm]") {
  if (skip_without_avx512_bf16()) return;
  NL_SKIP_WITHOUT_ONEDNN();
  GridCase head(32, 32, 32, false, true, DType::Float32, 0.17, 0.0, 7);
  {  // native products (chosen by the CPU's rates unless forced, as here)
    nltest::EnvGuard g("NORMLAB_BF16_PRODUCTS", "native");
    CHECK_THAT(cpu::bf16_gemm_impl(head.gemm()), Contains("small-product kernel"));
  }
  for (const char* var : {"NORMLAB_BF16_FALLBACK", "NORMLAB_BF16_PRODUCTS"}) {  // float32 products do not take it
    nltest::EnvGuard g(var, std::string(var) == "NORMLAB_BF16_FALLBACK" ? "1" : "float32");
    CHECK_THAT(cpu::bf16_gemm_impl(head.gemm()), Contains("float32 products of the widened operands"));
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
