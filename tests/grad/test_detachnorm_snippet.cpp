// The C++ snippet of docs/normalization-gradients.md (extracted between the snippet markers by
// docs/make-normalization-gradients.sh), compiled and checked here so the tutorial cannot rot:
// DetachNorm built from primitive ops and nl::detach equals the library's detachnorm.
#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/functions.h"
#include "nn/norm/factory.h"

// [snippet:detachnorm]
// DetachNorm (Xu et al. 2019, Sec. 3): y = (x - mu) / sigma with the gradient through mu and sigma cut.
// x: [..., H]; the paper's biased sigma, eps = 0.
nl::Variable detach_norm(const nl::Variable& x) {
  using namespace nl;
  Variable mu = mean(x, {-1}, /*keepdim=*/true);                     // mu = (1/H) sum_i x_i
  Variable d = sub(x, mu);                                           // x - mu
  Variable sigma = sqrt(mean(square(d), {-1}, /*keepdim=*/true));    // sigma = sqrt((1/H) sum_i d_i^2)
  // The two cuts: in backward, mu and sigma are constants, so dL/dx = g / sigma (appendix B, Eq. 5).
  return div(sub(x, detach(mu)), detach(sigma));
}
// Print the tape: the two Detach nodes are marked "[detach: gradient stops here]".
//   nl::Tape::current().clear();
//   nl::Variable x(nl::Tensor::randn({1, 4}, 0, 1, nl::DType::Float64), true, "x");
//   nl::Variable y = detach_norm(x);
//   std::cout << nl::Tape::current().dump();
// [/snippet]

TEST_CASE("doc snippet: DetachNorm from primitive ops equals the library's detachnorm", "[grad]") {
  nl::manual_seed(5);
  const int64_t H = 9;
  nl::Tensor x = nl::affine(nl::Tensor::randn({3, H}, 0, 1, nl::DType::Float64), 2.0, 0.5);
  nl::Tensor g = nl::Tensor::randn({3, H}, 0.3, 1, nl::DType::Float64);
  nl::Tape::current().clear();
  nl::Variable a(x.clone(), true, "x");
  nl::Variable ya = detach_norm(a);
  const std::string tape = nl::Tape::current().dump();
  CHECK(tape.find("[detach: gradient stops here]") != std::string::npos);
  ya.backward(g);
  nl::Variable b(x.clone(), true);
  nl::Variable yb = nl::make_norm("detachnorm", H, {{"eps", 0.0}})->forward(b);
  yb.backward(g);
  const auto va = ya.data().to_vector<double>(), vb = yb.data().to_vector<double>();
  const auto ga = a.grad().to_vector<double>(), gb = b.grad().to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i) {
    CHECK(va[i] == Approx(vb[i]).margin(1e-12));
    CHECK(ga[i] == Approx(gb[i]).margin(1e-12));
  }
}
