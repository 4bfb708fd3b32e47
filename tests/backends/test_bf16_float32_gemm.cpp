// Mixed-precision products run as float32 products of the widened operands (backends/cpu/bf16_float32_gemm.h:
// the path of CPUs whose bfloat16 dot products are slower than float32 FMAs, or missing): single products
// and grids on the blocked kernel (several K, row and column blocks, ragged edges), every transposition, alpha, beta, bias, ReLU and both result dtypes against the exact product of the
// bfloat16 operands; results independent of the thread count; the choice of path and its switches.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "backends/cpu/bf16_dot_rate.h"
#include "backends/cpu/bf16_float32_gemm.h"
#include "backends/cpu/cpu_features.h"
#include "backends/cpu/threads.h"
#include "backends/backend.h"
#include "bf16_grid_case.h"
#include "bf16_test_util.h"

using namespace nl;
using Catch::Matchers::Contains;
using nltest::GridCase;

namespace {
void run_float32(const MixedGemm& g) { cpu::bf16_gemm_float32(backend_for(DeviceType::CPU), g); }
}  // namespace

TEST_CASE("bf16 float32 products: single products and grids, every transposition, alpha, beta, bias, ReLU and "
          "both result dtypes equal the exact product of the bfloat16 operands within float32 accumulation error",
          "[bf16][gemm]") {
  struct Size {
    int64_t M, N, K, batch, outer;
  };
  // 261 x 70 x 600: three K blocks (256) of one group, three row blocks (128) with a ragged last one, a
  // ragged strip of N; 130 x 300 x 900: four K blocks, the column block narrowed to 288 (op(B) of the whole
  // K in 1 MiB), then 12 columns; 20 x 40 x 1100: K above 1024, five groups of one K block (a bfloat16 C then
  // in a float32 copy of the whole product); 40 x 600 x 100: two column blocks (512), the second ragged;
  // 64 x 96 x 300: one row block; 40 x 33 x 20: a small product; 32^3 over a 2 x 3 grid: the attention's layout.
  for (const Size s : {Size{261, 70, 600, 1, 1}, Size{130, 300, 900, 1, 1}, Size{20, 40, 1100, 1, 1},
                       Size{40, 600, 100, 1, 1}, Size{64, 96, 300, 1, 1}, Size{40, 33, 20, 1, 1},
                       Size{32, 32, 32, 2, 3}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (DType c : {DType::Float32, DType::BFloat16})
          for (int variant = 0; variant < 3; ++variant) {
            // 0: plain; 1: bias and ReLU (a Linear + ReLU forward); 2: alpha, beta (a gradient summed) and bias
            const double alpha = variant == 2 ? 0.5 : 1.0, beta = variant == 2 ? 0.75 : 0.0;
            INFO(s.M << "x" << s.N << "x" << s.K << " grid " << s.outer << "x" << s.batch << " ta " << ta << " tb "
                     << tb << " C " << dtype_name(c) << " variant " << variant);
            GridCase gc(s.M, s.N, s.K, ta, tb, c, alpha, beta, (uint32_t)(s.M + 7 * variant + 3 * ta + tb),
                        s.batch, s.outer);
            if (variant > 0) gc.bias.assign(gc.c32.begin(), gc.c32.begin() + s.N);
            gc.relu = variant == 1;
            CHECK(nltest::worst_excess(gc, run_float32) <= 0.0);
          }
}

TEST_CASE("bf16 float32 products: the blocked kernel gives the same bits on one and two threads", "[bf16][gemm]") {
  if (!cpu::bf16_float32_blocked_kernel()) {  // OpenBLAS runs the products, with its own bits per thread count
    std::cout << nltest::kSkipMarker << " this build has no AVX-512 blocked kernel" << std::endl;
    return;
  }
  const int before = get_num_threads();
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    GridCase gc(600, 96, 300, false, true, DType::Float32, 1.0, 0.0, 5, 1, 1);  // 5 row blocks split over threads
    run_float32(gc.gemm());
    results.push_back(gc.c32);
  }
  set_num_threads(before);
  CHECK(results[0] == results[1]);
}

TEST_CASE("bf16 float32 products: the path is chosen by the CPU's measured rates, and the switches override it",
          "[bf16][gemm]") {
  NL_SKIP_WITHOUT_ONEDNN();
  const auto& f = cpu::cpu_features();
  const cpu::Bf16DotRate& r = cpu::bf16_dot_rate();
  INFO(cpu_bf16_info());
  if (f.avx512_bf16) {
    CHECK(r.bf16_gflops > 0.0);
    CHECK(r.fma_gflops > 0.0);
    const bool by_cpu = !std::getenv("NORMLAB_BF16_PRODUCTS") && !cpu::bf16_fallback_forced();  // not overridden
    if (!f.amx_bf16 && by_cpu) CHECK(cpu_bf16_products_native() == (r.bf16_gflops >= r.fma_gflops));
  } else {
    CHECK(r.bf16_gflops == 0.0);
    CHECK_FALSE(cpu_bf16_products_native());
  }
  {
    nltest::EnvGuard g("NORMLAB_BF16_PRODUCTS", "float32");
    CHECK_FALSE(cpu_bf16_products_native());
    CHECK_THAT(cpu_bf16_info(), Contains("products in float32 (NORMLAB_BF16_PRODUCTS=float32)"));
  }
  {
    nltest::EnvGuard g("NORMLAB_BF16_PRODUCTS", "native");
    if (f.avx512_bf16 || f.amx_bf16)
      CHECK(cpu_bf16_products_native());
    else
      CHECK_THROWS_WITH(cpu_bf16_products_native(), Contains("has no AVX512_BF16 or AMX-BF16"));
    nltest::EnvGuard fallback("NORMLAB_BF16_FALLBACK", "1");  // the emulated path wins over everything
    CHECK_FALSE(cpu_bf16_products_native());
  }
  {
    nltest::EnvGuard g("NORMLAB_BF16_PRODUCTS", "fast");
    CHECK_THROWS_WITH(cpu_bf16_products_native(), Contains("NORMLAB_BF16_PRODUCTS='fast' is not a choice") &&
                                                      Contains("native, float32"));
  }
}
