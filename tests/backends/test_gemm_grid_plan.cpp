// plan_gemm_grid (backends/gemm_grid_plan.h), the mapping the CUDA backend uses to run a grid of outer x
// batch products as one strided-batched cuBLAS call: for every strided plan, product i of the call reads
// and writes exactly the memory of grid product (o, b), i = o * batch + b; grids whose strides do not fold
// get the pointer-array plan. (The CUDA run itself: cuda_slow_paths.cpp.)
#include <catch2/catch.hpp>

#include <algorithm>

#include "backends/gemm_grid_plan.h"

using nl::GemmGridPlan;
using nl::plan_gemm_grid;

TEST_CASE("gemm_grid plans address the grid's products", "[kernels][gemm]") {
  struct Case { int64_t sA, oA, sB, oB, sC, oC, batch, outer; GemmGridPlan::Kind kind; };
  const Case cases[] = {
      {35, 0, 42, 0, 30, 0, 4, 1, GemmGridPlan::Batch},                  // one sequence
      {0, 35, 0, 42, 0, 30, 1, 3, GemmGridPlan::Outer},                  // one head per sequence
      {35, 140, 42, 168, 30, 120, 4, 3, GemmGridPlan::Flat},             // contiguous heads
      {35, 140, 0, 0, 30, 120, 4, 3, GemmGridPlan::Flat},                // B shared by every product
      {7, 4 * 5 * 7 * 9, 7, 4 * 6 * 7 * 9, 6, 4 * 5 * 6 * 9, 4, 3, GemmGridPlan::PointerArray},  // heads-last
  };
  for (const Case& c : cases) {
    const GemmGridPlan p = plan_gemm_grid(c.sA, c.oA, c.sB, c.oB, c.sC, c.oC, c.batch, c.outer);
    CHECK(p.kind == c.kind);
    if (p.kind == GemmGridPlan::PointerArray) {
      CHECK(p.count == c.batch * c.outer);
      continue;
    }
    REQUIRE(p.count == c.batch * std::max<int64_t>(c.outer, 1));
    for (int64_t o = 0; o < std::max<int64_t>(c.outer, 1); ++o)
      for (int64_t b = 0; b < c.batch; ++b) {
        const int64_t i = o * c.batch + b;
        CHECK(i * p.sA == o * c.oA + b * c.sA);
        CHECK(i * p.sB == o * c.oB + b * c.sB);
        CHECK(i * p.sC == o * c.oC + b * c.sC);
      }
  }
  CHECK(plan_gemm_grid(1, 1, 1, 1, 1, 1, 4, 0).count == 0);  // an empty grid runs nothing
}
