#pragma once
// Closed forms of Xu et al. 2019, "Understanding and Improving Layer Normalization", Theorem 1
// (proof in appendix B), in one place: the backward matrices W1, W2, W3, I/sigma (and AdaNorm's),
// the same with the released code's estimator (seed-code §1.2), and the predicted mean and variance
// of the gradient dL/dx. Plain float64 on one vector of size H; no autograd, no tensors.
//
// Notation (appendix B): y = (x - mu)/sigma, g = dL/dy, gbar = mean(g), D_g = (1/H) sum (g_i - gbar)^2,
// sigma the biased std (1/H), eps = 0, and D_a = D_g/sigma^2 (DetachNorm's variance, Eq. 7). Theorem 1: with b = dL/dx,
//   LayerNorm-simple  b = W1 g   mean(b) = 0          var(b) <= D_g/sigma^2   (Eq. 8-13)
//   detach-mean       b = W2 g   mean(b) = gbar/sigma var(b) <= D_g/sigma^2   (Eq. 14-18)
//   detach-variance   b = W3 g   mean(b) = 0          var(b)  = D_g/sigma^2   (Eq. 19-23)
//   DetachNorm        b = g/sigma mean(b) = gbar/sigma var(b) = D_g/sigma^2   (Eq. 5-7)
#include <cstdint>
#include <string>
#include <vector>

namespace nl::theory {

/// How the std and its eps are computed (layer_norm.h). paper(): biased sigma, eps = 0 (Xu et al.
/// 2019, appendix B); released_code(): unbiased std with eps = 1e-5 added to the std (lancopku/AdaNorm,
/// seed-code §1.1).
struct Estimator {
  bool unbiased = false;   ///< divide by H - 1 instead of H
  bool eps_inside = true;  ///< D = sqrt(var + eps) (true) or D = std + eps (false)
  double eps = 0.0;
  static Estimator paper() { return {}; }
  static Estimator released_code() { return {true, false, 1e-5}; }
  /// "paper (biased sigma, eps 0)" / "code (unbiased std + eps 1e-05)" style label.
  std::string str() const;
};

/// A dense n x n matrix, row-major: at(i, j) = a[i * n + j].
struct Matrix {
  int64_t n = 0;
  std::vector<double> a;
  explicit Matrix(int64_t size = 0) : n(size), a((size_t)(size * size), 0.0) {}
  double& at(int64_t i, int64_t j) { return a[(size_t)(i * n + j)]; }
  double at(int64_t i, int64_t j) const { return a[(size_t)(i * n + j)]; }
};

/// Largest |A_ij - B_ij|. Throws std::invalid_argument if the sizes differ.
double max_abs_diff(const Matrix& A, const Matrix& B);
/// A^T v (the backward pass of a Jacobian A: dL/dx = J^T dL/dy). Throws on a size mismatch.
std::vector<double> transpose_times(const Matrix& A, const std::vector<double>& v);

/// Mean and biased variance (1/H) of a vector: gbar and D_g of appendix B. Throws on H < 1.
struct Moments {
  double mean = 0, var = 0;
};
Moments moments(const double* v, int64_t H);
inline Moments moments(const std::vector<double>& v) { return moments(v.data(), (int64_t)v.size()); }

/// The forward statistics of x under an estimator: mu, sigma (biased std, the paper's), s (the
/// estimator's std: biased or unbiased, without eps), D (the denominator: sqrt(s^2+eps) or s+eps) and
/// y = (x - mu)/D. Throws std::invalid_argument on H < 2 or a constant x (sigma = 0).
struct Forward {
  double mu = 0, sigma = 0, s = 0, D = 0;
  std::vector<double> y;
};
Forward forward_stats(const std::vector<double>& x, const Estimator& est = Estimator::paper());

/// The names the closed forms know: layernorm_family_names() of factory.h. "layernorm" is taken at its
/// initialisation (gain 1, bias 0), where it equals LayerNorm-simple; "none" is the identity.
bool known_variant(const std::string& variant);
/// Throws std::invalid_argument naming the valid variants if `variant` is unknown.
void require_variant(const std::string& variant);

/// AdaNorm's detached factor phi(y) = C (1 - k y) (Xu et al. 2019, Eq. 9), elementwise.
std::vector<double> adanorm_factor(const std::vector<double>& y, double C, double k);

/// The paper's Jacobian dy/dx (H x H) of `variant` at x, appendix B with biased sigma and eps = 0:
/// W1 = (1/sigma)(I - y y^T/H - 1 1^T/H) (Eq. 8, LayerNorm-simple and LayerNorm at init),
/// W2 = (1/sigma)(I - y y^T/H) (Eq. 14, detach-mean), W3 = (1/sigma)(I - 1 1^T/H) (Eq. 19,
/// detach-variance), I/sigma (Eq. 5, DetachNorm), I (none); AdaNorm z = phi(y) ⊙ y with phi detached:
/// dz/dx = diag(phi) W1, so dL/dx = (diag(phi) W1)^T g = W1 diag(phi) g (W1 is symmetric).
/// Throws std::invalid_argument on an unknown variant, H < 2 or a constant x.
Matrix paper_jacobian(const std::string& variant, const std::vector<double>& x, double C = 2.0, double k = 0.1);

/// The same Jacobian under any estimator (seed-code §1.2, our derivation): with d = x - mu,
/// dD/dx_j = d_j / (n t), n = H or H - 1, t = s (eps on the std) or D (eps inside),
///   LayerNorm-simple  J = (1/D)(I - 1 1^T/H) - d d^T / (n t D^2)
///   detach-mean       J = I/D - d d^T / (n t D^2)
///   detach-variance   J = (1/D)(I - 1 1^T/H)
///   DetachNorm        J = I/D;   AdaNorm diag(phi(y)) times LayerNorm-simple's, y = d/D.
/// With Estimator::paper() it equals paper_jacobian. Throws as paper_jacobian.
Matrix estimator_jacobian(const std::string& variant, const std::vector<double>& x, const Estimator& est,
                          double C = 2.0, double k = 0.1);

/// How a measured statistic must relate to its prediction.
enum class Relation { Equal, AtMost };
/// "=" / "<=".
const char* relation_str(Relation r);

/// Theorem 1's prediction for one (x, g) pair: mean(dL/dx) `mean_rel` pred_mean and var(dL/dx)
/// `var_rel` pred_var, with sigma the estimator's scale D (= the paper's sigma for Estimator::paper()).
/// For AdaNorm the theorem applies to g' = phi(y) ⊙ g (LayerNorm-simple's backward of g'), so g_stats
/// are those of g'. "none" predicts the identity: mean gbar, var D_g.
struct Prediction {
  double mean = 0, var = 0;
  Relation mean_rel = Relation::Equal, var_rel = Relation::Equal;
  std::string statement;       ///< which statement of Theorem 1, e.g. "Theorem 1 (1): LayerNorm-simple, Eq. 10 and 13"
  std::string mean_statement;  ///< what the mean line confirms, e.g. "Theorem 1 (1), Eq. 10: re-centred"
  std::string var_statement;   ///< what the variance line confirms
};
/// Throws std::invalid_argument on an unknown variant or scale <= 0.
Prediction theorem1_prediction(const std::string& variant, const Moments& g_stats, double scale);

/// True when `measured` satisfies `rel` against `predicted` up to rounding: |m - p| <= tol * ref for
/// Equal, m <= p + tol * ref for AtMost (ref: the natural size of the quantity, e.g. D_g/sigma^2).
bool relation_holds(Relation rel, double measured, double predicted, double ref, double tol = 1e-9);

/// One (x, g, b = dL/dx) checked against Theorem 1: the statistics, the prediction and whether each
/// (in)equality holds. g' = phi ⊙ g for AdaNorm (C, k), else g. Throws as forward_stats and on
/// an unknown variant.
struct Theorem1Check {
  double sigma = 0;       ///< x's scale under the estimator: D (the paper's sigma when eps = 0, biased)
  double pred_scale = 0;  ///< the scale the prediction divides by: sigma, or 1 for "none"
  Moments g, b;       ///< of the (effective) upstream gradient and of dL/dx
  Prediction pred;
  bool mean_holds = false, var_holds = false;
};
Theorem1Check check_theorem1(const std::string& variant, const std::vector<double>& x, const std::vector<double>& g,
                             const std::vector<double>& b, const Estimator& est = Estimator::paper(), double C = 2.0,
                             double k = 0.1);

/// LayerNorm-simple's exact gradient variance (paper estimator): (D_g - (y.g/H)^2)/sigma^2, the
/// squared length of W1 g over H (appendix B, Eq. 12-13: only the component of g along y is removed
/// besides the mean). Throws as forward_stats; g must have x's size.
double ln_simple_exact_var(const std::vector<double>& x, const std::vector<double>& g);

}  // namespace nl::theory
