// Projection Merge Algorithm (Ni et al. 2024, Algorithm 1; notes §3): the scalar steps, and the built
// width-3 LN-Net classifying XOR and 100 random labellings, checked through normlab's forward.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "nn/linear.h"
#include "nn/norm/layer_norm.h"
#include "nn/theory/projection_merge.h"
#include "nn/theory/ssr.h"
#include "nn/theory/toy_sets.h"

using namespace nl;
using namespace nl::lntheory;

namespace {

int64_t count_correct(const std::vector<int>& pred, const std::vector<int>& labels) {
  int64_t c = 0;
  for (size_t k = 0; k < pred.size(); ++k) c += pred[k] == labels[k];
  return c;
}

// Every layer is Linear (with bias) or a 3-wide LayerNorm, and every hidden width is 3.
void check_width3(const MergeNet& mn, int64_t D) {
  REQUIRE(mn.net->size() == 2 * (size_t)mn.layer_norms() + 1);
  for (size_t l = 0; l < mn.net->size(); ++l) {
    const auto& m = (*mn.net)[l];
    if (l % 2 == 1) {
      auto* ln = dynamic_cast<LayerNorm*>(m.get());
      REQUIRE(ln != nullptr);
      CHECK(ln->dim == 3);
      continue;
    }
    auto* lin = dynamic_cast<Linear*>(m.get());
    REQUIRE(lin != nullptr);
    CHECK(lin->bias.defined());
    CHECK(lin->in_features == (l == 0 ? D : 3));
    CHECK(lin->out_features == (l + 1 == mn.net->size() ? 1 : 3));
  }
}

}  // namespace

TEST_CASE("ln-theory: one merge step sends p_i and p_j to 1/sqrt(2) and the loop ends with one value per class",
          "[lntheory][merge]") {
  const MergeStep s{2.0, 1.0};  // p_i = 1, p_j = 3
  CHECK(s.apply(1.0) == Approx(1 / std::sqrt(2.0)));
  CHECK(s.apply(3.0) == Approx(1 / std::sqrt(2.0)));
  CHECK(s.apply(2.0) == 1.0);
  const std::vector<double> p = {0.1, 0.5, 0.9, 1.7, 2.2, 3.1, 4.0};
  const std::vector<int> y = {0, 1, 0, 0, 1, 1, 0};
  const MergeRun r = projection_merge_scalar(p, y);
  CHECK(r.steps.size() <= p.size() - 2);
  std::set<double> v0, v1;
  for (size_t k = 0; k < p.size(); ++k) (y[k] ? v1 : v0).insert(r.final_values[k]);
  CHECK(v0.size() == 1);
  CHECK(v1.size() == 1);
  CHECK(*v0.begin() != *v1.begin());
}

TEST_CASE("ln-theory: merge builds a width-3 LN-Net that classifies XOR", "[lntheory][merge]") {
  Points X;
  std::vector<int> y;
  xor_corners(X, y);
  const MergeNet mn = build_merge_net(X, y, 0);
  CHECK(mn.layer_norms() >= 1);  // XOR is not linearly separable: at least one LN
  CHECK(mn.layer_norms() <= 2);  // m - 2
  check_width3(mn, 2);
  CHECK(count_correct(merge_net_predict(mn, X), y) == 4);
  // Flipped labels are just as easy.
  for (int& v : y) v = 1 - v;
  CHECK(count_correct(merge_net_predict(build_merge_net(X, y, 3), X), y) == 4);
}

TEST_CASE("ln-theory: merge reaches 100% on 100 random instances (m = 3..40, seeded) with at most m - 2 LayerNorms",
          "[lntheory][merge]") {
  for (int i = 0; i < 100; ++i) {
    const int64_t m = 3 + i % 38, D = 1 + i % 3;
    Points X;
    std::vector<int> y;
    random_labelled_points(m, D, 1000 + (uint64_t)i, X, y);
    const MergeNet mn = build_merge_net(X, y, (uint64_t)i);
    INFO("instance " << i << " m " << m << " D " << D << " LNs " << mn.layer_norms());
    CHECK(mn.layer_norms() <= std::max<int64_t>(m - 2, 0));
    check_width3(mn, D);
    std::vector<double> scores;
    CHECK(count_correct(merge_net_predict(mn, X, &scores), y) == m);
  }
}

TEST_CASE("ln-theory: the merge net's features break the linear bound on XOR", "[lntheory][merge][ssr]") {
  Points X;
  std::vector<int> y;
  xor_corners(X, y);
  const MergeNet mn = build_merge_net(X, y, 0);
  const std::vector<Points> f = merge_net_features(mn, X);
  REQUIRE(f.size() == (size_t)mn.layer_norms());
  const Points& last = f.back();
  const Points F1 = {last[0], last[3]}, F2 = {last[1], last[2]};
  const double input = lssr({X[0], X[3]}, {X[1], X[2]}).value;
  CHECK(input == Approx(1.0).epsilon(1e-12));  // XOR corners: equal class means, no linear map helps
  // After the last LN the classes differ only along the read-out direction (the other coordinate of the
  // circle, (p - mid)/||h||, still differs within a class): the best projection has SSR ~ 0.
  CHECK(lssr(F1, F2).value < 1e-6);
  CHECK(ssr(F1, F2) < input);
  CHECK(ssr_projected(F1, F2, merge_readout()) < 1e-12);  // the merged scalar: one value per class
}

TEST_CASE("ln-theory: bad merge inputs give clear errors", "[lntheory][merge]") {
  CHECK_THROWS_WITH(build_merge_net({{0, 0}, {0, 0}}, {0, 1}), Catch::Contains("labelled differently"));
  CHECK_THROWS_WITH(build_merge_net({{0, 0}, {1, 0}}, {0, 2}), Catch::Contains("use 0 or 1"));
  CHECK_THROWS_WITH(build_merge_net({{0, 0}, {1, 0}}, {0}), Catch::Contains("one label per point"));
  CHECK_THROWS_WITH(build_merge_net({{0, 0}, {1}}, {0, 1}), Catch::Contains("dimension"));
  CHECK_THROWS_WITH(projection_merge_scalar({1.0, 1.0}, {0, 1}), Catch::Contains("same value"));
  // A single class needs no LayerNorm at all.
  const MergeNet one = build_merge_net({{0, 0}, {1, 2}, {3, 1}}, {1, 1, 1});
  CHECK(one.layer_norms() == 0);
  CHECK(count_correct(merge_net_predict(one, {{0, 0}, {1, 2}, {3, 1}}), {1, 1, 1}) == 3);
  const MergeNet zero = build_merge_net({{0, 0}, {1, 2}, {3, 1}}, {0, 0, 0});
  CHECK(count_correct(merge_net_predict(zero, {{0, 0}, {1, 2}, {3, 1}}), {0, 0, 0}) == 3);
}
