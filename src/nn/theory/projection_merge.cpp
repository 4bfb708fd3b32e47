// Projection Merge Algorithm (Ni et al. 2024, Algorithm 1; notes §3) and its width-3 LN-Net; see
// projection_merge.h.
#include "nn/theory/projection_merge.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

#include "autograd/tape.h"
#include "nn/linear.h"
#include "nn/norm/layer_norm.h"

namespace nl::lntheory {
namespace {

void check_labels(const std::vector<int>& labels, size_t m, const char* who) {
  if (labels.size() != m)
    throw std::invalid_argument(std::string(who) + ": " + std::to_string(m) + " points but " +
                                std::to_string(labels.size()) + " labels; pass one label per point");
  for (int y : labels)
    if (y != 0 && y != 1)
      throw std::invalid_argument(std::string(who) + ": label " + std::to_string(y) + " is not binary; use 0 or 1");
}

// Orthonormal basis of the plane 1^T z = 0 in R^3 (notes §3, "As an LN-Net").
const double kQ1[3] = {1 / std::sqrt(2.0), -1 / std::sqrt(2.0), 0};
const double kQ2[3] = {1 / std::sqrt(6.0), 1 / std::sqrt(6.0), -2 / std::sqrt(6.0)};

Tensor tensor_of(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }

// Smallest |p_a - p_b| over pairs with different labels (0 if a class is missing: nothing to separate).
double min_cross_gap(const std::vector<double>& p, const std::vector<int>& labels) {
  std::vector<std::pair<double, int>> s;
  for (size_t k = 0; k < p.size(); ++k) s.push_back({p[k], labels[k]});
  std::sort(s.begin(), s.end());
  double gap = INFINITY;
  for (size_t k = 1; k < s.size(); ++k)
    if (s[k].second != s[k - 1].second) gap = std::min(gap, s[k].first - s[k - 1].first);
  return std::isinf(gap) ? 0.0 : gap;
}

Tensor points_tensor(const Points& X, int64_t D, const char* who) {
  if (X.empty()) throw std::invalid_argument(std::string(who) + ": no points; pass at least one");
  std::vector<double> flat;
  for (const auto& p : X) {
    if ((int64_t)p.size() != D)
      throw std::invalid_argument(std::string(who) + ": a point has dimension " + std::to_string(p.size()) +
                                  " but the network takes " + std::to_string(D));
    flat.insert(flat.end(), p.begin(), p.end());
  }
  return tensor_of(flat, {(int64_t)X.size(), D});
}

}  // namespace

double MergeStep::apply(double p) const { return c / std::sqrt((p - mid) * (p - mid) + c * c); }

MergeRun projection_merge_scalar(const std::vector<double>& p0, const std::vector<int>& labels) {
  const size_t m = p0.size();
  if (m < 1) throw std::invalid_argument("projection_merge_scalar: no points; pass at least one");
  check_labels(labels, m, "projection_merge_scalar");
  for (double v : p0)
    if (!std::isfinite(v)) throw std::invalid_argument("projection_merge_scalar: a projection is not finite");
  for (size_t a = 0; a < m; ++a)
    for (size_t b = a + 1; b < m; ++b)
      if (p0[a] == p0[b] && labels[a] != labels[b])
        throw std::invalid_argument("projection_merge_scalar: points " + std::to_string(a) + " and " +
                                    std::to_string(b) + " have the same value but different labels; no network "
                                    "can separate them (project the inputs on another direction)");
  MergeRun run;
  std::vector<double> p = p0;
  std::set<double> removed;  // values taken out of the active set P (Algorithm 1, line 16)
  // Each merge makes at least two distinct values one (and no step splits a value), so the loop
  // runs at most m - 1 merges; the guard only protects against a broken invariant.
  while (run.steps.size() <= m) {
    // Line 4: i = the smallest active value.
    double pi = INFINITY;
    int yi = 0;
    for (size_t k = 0; k < m; ++k)
      if (!removed.count(p[k]) && p[k] < pi) pi = p[k], yi = labels[k];
    if (std::isinf(pi)) break;  // P is empty: line 3
    // Lines 5-7: j = the smallest active value != p_i with label y_i.
    double pj = INFINITY;
    for (size_t k = 0; k < m; ++k)
      if (!removed.count(p[k]) && labels[k] == yi && p[k] != pi) pj = std::min(pj, p[k]);
    if (std::isinf(pj)) {  // line 16
      removed.insert(pi);
      continue;
    }
    const MergeStep s{(pi + pj) / 2, (pj - pi) / 2};  // lines 9-11
    const double merged = s.apply(pi);
    for (double& v : p) v = (v == pi || v == pj) ? merged : s.apply(v);  // p_i, p_j bit-identical
    run.steps.push_back(s);
    removed.clear();  // line 14: P is reset to all points
  }
  if (run.steps.size() > m) throw std::logic_error("projection_merge_scalar: no convergence (a bug)");
  run.final_values = std::move(p);
  return run;
}

MergeNet build_merge_net(const Points& X, const std::vector<int>& labels, uint64_t seed) {
  if (X.empty()) throw std::invalid_argument("build_merge_net: no points; pass at least one");
  check_labels(labels, X.size(), "build_merge_net");
  const int64_t D = (int64_t)X[0].size();
  points_tensor(X, D, "build_merge_net");  // dimension check
  for (size_t a = 0; a < X.size(); ++a)
    for (size_t b = a + 1; b < X.size(); ++b)
      if (X[a] == X[b] && labels[a] != labels[b])
        throw std::invalid_argument("build_merge_net: points " + std::to_string(a) + " and " + std::to_string(b) +
                                    " are equal but labelled differently; no classifier can fit them");
  // The projection: the best of 32 random unit directions by the relative cross-label gap.
  MergeNet mn;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  double best = -1;
  for (int trial = 0; trial < 32; ++trial) {
    std::vector<double> w((size_t)D);
    double n2 = 0;
    for (double& v : w) v = normal(rng), n2 += v * v;
    for (double& v : w) v /= std::sqrt(n2);
    std::vector<double> p;
    for (const auto& x : X) {
      double s = 0;
      for (int64_t k = 0; k < D; ++k) s += w[(size_t)k] * x[(size_t)k];
      p.push_back(s);
    }
    const auto [lo, hi] = std::minmax_element(p.begin(), p.end());
    const double rel = *hi > *lo ? min_cross_gap(p, labels) / (*hi - *lo) : 0;
    if (rel > best) best = rel, mn.w = w, mn.min_gap = min_cross_gap(p, labels);
  }
  std::vector<double> p;
  for (const auto& x : X) {
    double s = 0;
    for (int64_t k = 0; k < D; ++k) s += mn.w[(size_t)k] * x[(size_t)k];
    p.push_back(s);
  }
  const bool one_class = std::count(labels.begin(), labels.end(), labels[0]) == (int64_t)labels.size();
  if (!one_class && mn.min_gap == 0)
    throw std::invalid_argument("build_merge_net: no projection separates the differently labelled points");
  if (one_class) mn.run.final_values = p;  // nothing to separate: no LayerNorm, a constant read-out
  else mn.run = projection_merge_scalar(p, labels);

  // The read-out threshold between the final class values (one class only: any value on its side).
  double v0 = NAN, v1 = NAN;
  for (size_t k = 0; k < X.size(); ++k) (labels[k] ? v1 : v0) = mn.run.final_values[k];
  const auto [lo, hi] = std::minmax_element(mn.run.final_values.begin(), mn.run.final_values.end());
  if (std::isnan(v0)) mn.threshold = *lo - 1, mn.sign = 1;       // all label 1: every score > 0
  else if (std::isnan(v1)) mn.threshold = *hi + 1, mn.sign = 1;  // all label 0: every score < 0
  else mn.threshold = (v0 + v1) / 2, mn.sign = v1 > v0 ? 1 : -1;

  // The network (notes §3 "As an LN-Net"): p = w.x; per merge Q[p - mid; c] -> LN; p' = q2^T z/sqrt(3).
  mn.net = std::make_shared<Sequential>();
  NoGradGuard ng;
  auto add_linear = [&](int64_t in, int64_t out, const std::vector<double>& W, const std::vector<double>& b) {
    auto lin = std::make_shared<Linear>(in, out, true, DType::Float64);
    lin->weight.set_data(tensor_of(W, {out, in}));
    lin->bias.set_data(tensor_of(b, {out}));
    mn.net->push_back(lin);
  };
  LayerNormConfig ln_cfg = LayerNormConfig::variant("layernorm-simple");  // no gain/bias
  ln_cfg.eps = 0;  // exact scaling onto the circle (eps would only shrink it slightly)
  // `read` maps the current state to p: w (on x) first, then q2/sqrt(3) (on z).
  std::vector<double> read = mn.w;
  int64_t in = D;
  for (const MergeStep& s : mn.run.steps) {
    std::vector<double> W((size_t)(3 * in)), b(3);
    for (int r = 0; r < 3; ++r) {
      for (int64_t k = 0; k < in; ++k) W[(size_t)(r * in + k)] = kQ1[r] * read[(size_t)k];
      b[(size_t)r] = -s.mid * kQ1[r] + s.c * kQ2[r];
    }
    add_linear(in, 3, W, b);
    mn.net->push_back(std::make_shared<LayerNorm>(3, ln_cfg, DType::Float64));
    read = merge_readout();
    in = 3;
  }
  std::vector<double> W;
  for (double r : read) W.push_back(mn.sign * r);
  add_linear(in, 1, W, {-mn.sign * mn.threshold});
  return mn;
}

std::vector<int> merge_net_predict(const MergeNet& mn, const Points& X, std::vector<double>* scores) {
  NoGradGuard ng;
  Tensor x = points_tensor(X, (int64_t)mn.w.size(), "merge_net_predict");
  const std::vector<double> s = mn.net->forward(Variable(x)).data().contiguous().to_vector<double>();
  std::vector<int> pred;
  for (double v : s) pred.push_back(v > 0 ? 1 : 0);
  if (scores) *scores = s;
  return pred;
}

std::vector<double> merge_readout() { return {kQ2[0] / std::sqrt(3.0), kQ2[1] / std::sqrt(3.0), kQ2[2] / std::sqrt(3.0)}; }

std::vector<Points> merge_net_features(const MergeNet& mn, const Points& X) {
  NoGradGuard ng;
  Variable h(points_tensor(X, (int64_t)mn.w.size(), "merge_net_features"));
  std::vector<Points> out;
  for (size_t l = 0; l < mn.net->size(); ++l) {
    h = (*(*mn.net)[l])(h);
    if (l % 2 == 0) continue;  // Linear layers sit at even positions, LayerNorms at odd ones
    const std::vector<double> v = h.data().contiguous().to_vector<double>();
    Points P;
    for (size_t k = 0; k < X.size(); ++k) P.push_back({v[3 * k], v[3 * k + 1], v[3 * k + 2]});
    out.push_back(std::move(P));
  }
  return out;
}

}  // namespace nl::lntheory
