// Constant rows (sigma = 0) through every LayerNorm variant and AdaNorm, both implementations, both
// estimators and both eps placements (issue 7, item 3). With eps added to the std (the released AdaNorm
// code, eps_inside = false) D = sigma + eps = eps, and the chain rule through sqrt(var) at var = 0 gave
// inf * 0 = NaN in the composite path. Forward and backward must be finite and composite == fused.
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;

namespace {
// Rows 0 and 2 are constant (one of them 0), row 1 is ordinary; H = 5.
Tensor rows(DType dt) {
  return Tensor::from_vector<double>({3.25, 3.25, 3.25, 3.25, 3.25,  //
                                      0.5, -1.0, 2.0, 0.25, -0.75,   //
                                      0.0, 0.0, 0.0, 0.0, 0.0},
                                     {3, 5})
      .to(dt);
}

struct Result {
  Tensor y, gx;
};

Result run(const std::string& name, bool eps_inside, bool unbiased, const char* impl, DType dt) {
  nlohmann::json opts = {{"impl", impl}, {"eps_inside", eps_inside}, {"unbiased", unbiased}, {"eps", 1e-5}};
  if (name != "adanorm") opts["dtype"] = dt == DType::Float64 ? "float64" : "float32";
  auto norm = make_norm(name, 5, opts);
  Variable x(rows(dt), true, "x");
  Variable y = norm->forward(x);
  // A fixed, non-uniform upstream gradient so that every term of the backward is exercised.
  Variable g(Tensor::from_vector<double>({1, -2, 0.5, 3, -1, 0.25, 1, -1, 2, 0.5, -3, 1, 1, 0, 2}, {3, 5}).to(dt));
  sum(mul(y, g)).backward();
  return {y.data(), x.grad()};
}

bool all_finite(const Tensor& t) {
  for (double v : vals(t))
    if (!std::isfinite(v)) return false;
  return true;
}
}  // namespace

TEST_CASE("norm on constant rows: finite forward and backward, composite == fused, every variant and estimator",
          "[nn][norm]") {
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-12 : 1e-5;
    for (const std::string name : {"layernorm", "layernorm-simple", "detachnorm", "detach-mean", "detach-variance",
                                   "adanorm"})
      for (bool eps_inside : {true, false})
        for (bool unbiased : {false, true}) {
          CAPTURE(name, eps_inside, unbiased, dtype_name(dt));
          const Result c = run(name, eps_inside, unbiased, "composite", dt);
          const Result f = run(name, eps_inside, unbiased, "fused", dt);
          CHECK(all_finite(c.y));
          CHECK(all_finite(c.gx));
          CHECK(all_finite(f.y));
          CHECK(all_finite(f.gx));
          // Relative to the largest value: with D = eps the gradient of a constant row is ~1e5.
          CHECK(max_abs_diff(c.y, f.y) <= tol * std::max(1.0, max_abs(f.y)));
          CHECK(max_abs_diff(c.gx, f.gx) <= tol * std::max(1.0, max_abs(f.gx)));
          // A constant row normalises to exactly 0 (x - mu = 0) whatever D is.
          const auto y = vals(c.y);
          for (int i : {0, 1, 2, 3, 4, 10, 11, 12, 13, 14}) CHECK(y[i] == 0.0);
        }
  }
}
