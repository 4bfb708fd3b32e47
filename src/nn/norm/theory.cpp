// Closed forms of Theorem 1 (Xu et al. 2019, appendix B); equations in theory.h.
#include "nn/norm/theory.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "nn/norm/factory.h"

namespace nl::theory {

std::string Estimator::str() const {
  std::ostringstream o;
  o << (unbiased ? "unbiased std" : "biased sigma") << ", eps " << eps
    << (eps == 0 ? "" : eps_inside ? " inside the sqrt" : " added to the std");
  return o.str();
}

double max_abs_diff(const Matrix& A, const Matrix& B) {
  if (A.n != B.n)
    throw std::invalid_argument("max_abs_diff: matrices of size " + std::to_string(A.n) + " and " + std::to_string(B.n));
  double m = 0;
  for (size_t i = 0; i < A.a.size(); ++i) m = std::max(m, std::abs(A.a[i] - B.a[i]));
  return m;
}

std::vector<double> transpose_times(const Matrix& A, const std::vector<double>& v) {
  if ((int64_t)v.size() != A.n)
    throw std::invalid_argument("transpose_times: vector of size " + std::to_string(v.size()) + " for a matrix of size " +
                                std::to_string(A.n));
  std::vector<double> out((size_t)A.n, 0.0);
  for (int64_t i = 0; i < A.n; ++i)
    for (int64_t j = 0; j < A.n; ++j) out[(size_t)j] += A.at(i, j) * v[(size_t)i];
  return out;
}

Moments moments(const double* v, int64_t H) {
  if (H < 1) throw std::invalid_argument("moments: empty vector");
  Moments m;
  for (int64_t i = 0; i < H; ++i) m.mean += v[i];
  m.mean /= (double)H;
  for (int64_t i = 0; i < H; ++i) m.var += (v[i] - m.mean) * (v[i] - m.mean);
  m.var /= (double)H;
  return m;
}

Forward forward_stats(const std::vector<double>& x, const Estimator& est) {
  const int64_t H = (int64_t)x.size();
  if (H < 2) throw std::invalid_argument("forward_stats: H must be at least 2, got " + std::to_string(H));
  const Moments m = moments(x);
  if (!(m.var > 0)) throw std::invalid_argument("forward_stats: x is constant (sigma = 0)");
  Forward f;
  f.mu = m.mean;
  f.sigma = std::sqrt(m.var);
  f.s = est.unbiased ? std::sqrt(m.var * (double)H / (double)(H - 1)) : f.sigma;
  f.D = est.eps_inside ? std::sqrt(f.s * f.s + est.eps) : f.s + est.eps;
  f.y.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) f.y[i] = (x[i] - f.mu) / f.D;
  return f;
}

bool known_variant(const std::string& v) {
  const auto& n = layernorm_family_names();
  return std::find(n.begin(), n.end(), v) != n.end();
}

void require_variant(const std::string& v) {
  if (known_variant(v)) return;
  std::string list;
  for (const auto& n : layernorm_family_names()) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown norm '" + v + "' (valid: " + list + ")");
}

namespace {
// The family flags of variant v (norm table, factory.h); throws require_variant's error for another name.
const LayerNormVariant& flags_of(const std::string& v) {
  require_variant(v);
  return layernorm_variant(v);
}
}  // namespace

std::vector<double> adanorm_factor(const std::vector<double>& y, double C, double k) {
  std::vector<double> phi(y.size());
  for (size_t i = 0; i < y.size(); ++i) phi[i] = C * (1.0 - k * y[i]);
  return phi;
}

namespace {
// Which terms of dy/dx survive: the mean's (-1 1^T/H) and the std's (-d d^T/(n t D^2)).
struct Terms {
  bool mean_term, std_term, identity_only;
};
Terms terms_of(const std::string& v) {
  const LayerNormVariant& f = flags_of(v);
  if (f.identity) return {false, false, true};
  return {!f.detach_mean, !f.detach_std, false};
}
}  // namespace

Matrix estimator_jacobian(const std::string& variant, const std::vector<double>& x, const Estimator& est, double C,
                          double k) {
  const Terms t = terms_of(variant);
  const int64_t H = (int64_t)x.size();
  if (H < 2) throw std::invalid_argument("jacobian: H must be at least 2, got " + std::to_string(H));
  Matrix J(H);
  if (t.identity_only) {
    for (int64_t i = 0; i < H; ++i) J.at(i, i) = 1.0;
    return J;
  }
  const Forward f = forward_stats(x, est);
  const double n = est.unbiased ? (double)(H - 1) : (double)H;
  const double tt = est.eps_inside ? f.D : f.s;  // dD/dx_j = d_j / (n tt)
  for (int64_t i = 0; i < H; ++i)
    for (int64_t j = 0; j < H; ++j) {
      double v = (i == j ? 1.0 : 0.0) / f.D;
      if (t.mean_term) v -= 1.0 / ((double)H * f.D);
      if (t.std_term) v -= (x[i] - f.mu) * (x[j] - f.mu) / (n * tt * f.D * f.D);
      J.at(i, j) = v;
    }
  if (flags_of(variant).adaptive) {
    const std::vector<double> phi = adanorm_factor(f.y, C, k);
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < H; ++j) J.at(i, j) *= phi[(size_t)i];
  }
  return J;
}

Matrix paper_jacobian(const std::string& variant, const std::vector<double>& x, double C, double k) {
  // Written as in appendix B (y y^T/H, 1 1^T/H) rather than through estimator_jacobian, so the
  // test "paper == estimator form with the paper's estimator" compares two derivations.
  const Terms t = terms_of(variant);
  const int64_t H = (int64_t)x.size();
  if (H < 2) throw std::invalid_argument("jacobian: H must be at least 2, got " + std::to_string(H));
  Matrix W(H);
  if (t.identity_only) {
    for (int64_t i = 0; i < H; ++i) W.at(i, i) = 1.0;
    return W;
  }
  const Forward f = forward_stats(x, Estimator::paper());
  const std::vector<double>& y = f.y;
  for (int64_t i = 0; i < H; ++i)
    for (int64_t j = 0; j < H; ++j) {
      double w = i == j ? 1.0 : 0.0;                                     // I
      if (t.std_term) w -= y[(size_t)i] * y[(size_t)j] / (double)H;   // - y y^T / H
      if (t.mean_term) w -= 1.0 / (double)H;                          // - 1 1^T / H
      W.at(i, j) = w / f.sigma;
    }
  if (flags_of(variant).adaptive) {  // dz/dx = diag(phi) W1
    const std::vector<double> phi = adanorm_factor(y, C, k);
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < H; ++j) W.at(i, j) *= phi[(size_t)i];
  }
  return W;
}

const char* relation_str(Relation r) { return r == Relation::Equal ? "=" : "<="; }

Prediction theorem1_prediction(const std::string& v, const Moments& g, double scale) {
  const LayerNormVariant& f = flags_of(v);
  if (!(scale > 0)) throw std::invalid_argument("theorem1_prediction: scale must be positive");
  const double m = g.mean / scale, d = g.var / (scale * scale);
  using R = Relation;
  if (f.identity)
    return {g.mean, g.var, R::Equal, R::Equal, "no normalisation: dL/dx = g (identity)", "identity: mean unchanged",
            "identity: variance unchanged"};
  if (f.detach_mean && f.detach_std)
    return {m, d, R::Equal, R::Equal, "DetachNorm: a = g/sigma, Eq. 5-7",
            "DetachNorm, Eq. 7: mean only divided by sigma (not re-centred)",
            "DetachNorm, Eq. 7: variance only divided by sigma^2 (the reference D_a)"};
  if (f.detach_mean)
    return {m, d, R::Equal, R::AtMost, "Theorem 1 (2): detach-mean, Eq. 16 and 18",
            "Theorem 1 (2), Eq. 16: without the mean's gradient, no re-centring",
            "Theorem 1 (2), Eq. 18: the std's gradient re-scales (variance at most D_a)"};
  if (f.detach_std)
    return {0, d, R::Equal, R::Equal, "Theorem 1 (3): detach-variance, Eq. 21 and 23",
            "Theorem 1 (3), Eq. 21: the mean's gradient re-centres",
            "Theorem 1 (3), Eq. 23: without the std's gradient, no re-scaling (variance = D_a)"};
  if (f.adaptive)
    return {0, d, R::Equal, R::AtMost, "Theorem 1 (1) applied to g' = C(1-ky)*g (AdaNorm's factor is detached)",
            "Theorem 1 (1), Eq. 10, for g': re-centred", "Theorem 1 (1), Eq. 13, for g': re-scaled (at most D_g'/sigma^2)"};
  return {0, d, R::Equal, R::AtMost, "Theorem 1 (1): LayerNorm-simple, Eq. 10 and 13",
          "Theorem 1 (1), Eq. 10: the mean's gradient re-centres",
          "Theorem 1 (1), Eq. 13: the std's gradient re-scales (variance at most D_a = D_g/sigma^2)"};
}

bool relation_holds(Relation rel, double measured, double predicted, double ref, double tol) {
  const double slack = tol * (std::abs(ref) + std::abs(predicted)) + 1e-300;
  return rel == Relation::Equal ? std::abs(measured - predicted) <= slack : measured <= predicted + slack;
}

Theorem1Check check_theorem1(const std::string& variant, const std::vector<double>& x, const std::vector<double>& g,
                             const std::vector<double>& b, const Estimator& est, double C, double k) {
  const LayerNormVariant& fl = flags_of(variant);
  if (g.size() != x.size() || b.size() != x.size())
    throw std::invalid_argument("check_theorem1: x, g and dL/dx must have the same size");
  const Forward f = forward_stats(x, est);
  Theorem1Check c;
  c.sigma = f.D;
  c.pred_scale = fl.identity ? 1.0 : f.D;
  if (fl.adaptive) {
    const std::vector<double> phi = adanorm_factor(f.y, C, k);
    std::vector<double> gp(g.size());
    for (size_t i = 0; i < g.size(); ++i) gp[i] = phi[i] * g[i];
    c.g = moments(gp);
  } else {
    c.g = moments(g);
  }
  c.b = moments(b);
  c.pred = theorem1_prediction(variant, c.g, c.pred_scale);
  const double ref_var = c.g.var / (c.pred_scale * c.pred_scale);
  const double ref_mean = std::sqrt(ref_var) + std::abs(c.g.mean) / c.pred_scale;
  c.mean_holds = relation_holds(c.pred.mean_rel, c.b.mean, c.pred.mean, ref_mean);
  c.var_holds = relation_holds(c.pred.var_rel, c.b.var, c.pred.var, ref_var);
  return c;
}

double ln_simple_exact_var(const std::vector<double>& x, const std::vector<double>& g) {
  if (g.size() != x.size()) throw std::invalid_argument("ln_simple_exact_var: x and g differ in size");
  const Forward f = forward_stats(x);
  const double H = (double)x.size();
  double yg = 0;
  for (size_t i = 0; i < x.size(); ++i) yg += f.y[i] * g[i];
  return (moments(g).var - (yg / H) * (yg / H)) / (f.sigma * f.sigma);
}

}  // namespace nl::theory
