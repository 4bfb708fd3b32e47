#include "common/grad_explain.h"

#include <stdexcept>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "autograd/functions.h"
#include "autograd/tape.h"
#include "common/grad_norms.h"
#include "nn/norm/factory.h"

namespace nlapp {
namespace th = nl::theory;
using nl::Tensor;
using nl::Variable;

ExplainResult explain_gradients(const ExplainConfig& cfg) {
  if (cfg.H > kMaxExplainH)
    throw std::invalid_argument("--H must be at most " + std::to_string(kMaxExplainH) + " for explain (it prints and " +
                                "stores H x H Jacobians, H backward passes), got " + std::to_string(cfg.H) +
                                "; use `normlab grad stats --H N` for large H");
  auto norm = make_grad_norm(cfg.norm, cfg.H, cfg.est, "composite", cfg.C, cfg.k);
  ExplainResult r;
  r.cfg = cfg;
  const int64_t H = cfg.H;
  nl::manual_seed(cfg.seed);
  Tensor x = nl::affine(Tensor::randn({1, H}, 0, 1, nl::DType::Float64), 2.5, 1.0);
  Tensor g = nl::affine(Tensor::randn({1, H}, 0, 1, nl::DType::Float64), 1.0, 0.5);
  r.x = x.to_vector<double>();
  r.g = g.to_vector<double>();
  r.fwd = th::forward_stats(r.x, cfg.est);

  nl::Tape::current().clear();
  Variable xv(x.clone(), true, "x");
  Variable y = norm->forward(xv);
  r.tape = nl::Tape::current().dump();

  r.autograd = th::Matrix(H);
  for (int64_t i = 0; i < H; ++i) {  // row i of dy/dx = (dy/dx)^T e_i
    Tensor e = Tensor::zeros({1, H}, nl::DType::Float64);
    e.data<double>()[i] = 1.0;
    xv.zero_grad();
    y.backward(e, /*retain_graph=*/true);
    const std::vector<double> row = xv.grad().to_vector<double>();
    std::copy(row.begin(), row.end(), r.autograd.a.begin() + i * H);
  }
  xv.zero_grad();
  y.backward(g, /*retain_graph=*/true);
  r.grad = xv.grad().to_vector<double>();
  nl::Tape::current().clear();

  r.paper = th::paper_jacobian(cfg.norm, r.x, cfg.C, cfg.k);
  r.estimator = th::estimator_jacobian(cfg.norm, r.x, cfg.est, cfg.C, cfg.k);
  r.diff_paper = th::max_abs_diff(r.autograd, r.paper);
  r.diff_estimator = th::max_abs_diff(r.autograd, r.estimator);
  r.check = th::check_theorem1(cfg.norm, r.x, r.g, r.grad, cfg.est, cfg.C, cfg.k);
  r.check_paper = th::check_theorem1(cfg.norm, r.x, r.g, r.grad, th::Estimator::paper(), cfg.C, cfg.k);
  return r;
}

std::string closed_form_formula(const std::string& norm) {
  th::require_variant(norm);
  const nl::LayerNormVariant& v = nl::layernorm_variant(norm);
  if (v.identity) return "I (no normalisation: y = x)";
  if (v.adaptive)
    return "dz/dx = diag(φ) W1, φ = C(1 − k y) detached (Eq. 9 with Eq. 8); so ∂ℓ/∂x = W1 diag(φ) g";
  if (v.detach_mean && v.detach_std) return "I/σ  (Eq. 5)";
  if (v.detach_mean) return "W2 = (1/σ)(I − y yᵀ/H)  (Eq. 14)";
  if (v.detach_std) return "W3 = (1/σ)(I − 1 1ᵀ/H)  (Eq. 19)";
  return std::string("W1 = (1/σ)(I − y yᵀ/H − 1 1ᵀ/H)  (Eq. 8)") +
         (nl::norm_descriptor(norm).affine ? "; LayerNorm at init (gain 1, bias 0) = LayerNorm-simple" : "");
}

namespace {
std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string vec_str(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size() && i < 10; ++i) {
    if (i) s += ' ';
    s += fmt("%.4f", v[i]);
  }
  return s + (v.size() > 10 ? " ...]" : "]");
}

std::string matrix_str(const th::Matrix& m) {
  const int64_t n = std::min<int64_t>(m.n, 10);
  std::string s;
  for (int64_t i = 0; i < n; ++i) {
    s += "   ";
    for (int64_t j = 0; j < n; ++j) s += fmt(" %8.4f", m.at(i, j));
    s += m.n > n ? " ...\n" : "\n";
  }
  if (m.n > n) s += "    (top-left 10 x 10 of " + std::to_string(m.n) + " x " + std::to_string(m.n) + ")\n";
  return s;
}

std::string holds(bool ok) { return ok ? "holds" : "DOES NOT HOLD"; }

// The (d) lines for one check: measured statistics against the prediction, with the statement.
std::string check_lines(const th::Theorem1Check& c, const std::string& scale_name, bool ada, bool none) {
  const std::string gname = ada ? "ḡ'" : "ḡ", dname = ada ? "D_g'" : "D_g";
  const std::string ratio_m = none ? gname : gname + "/" + scale_name;
  const std::string ratio_v = none ? dname : dname + "/" + scale_name + "²";
  std::ostringstream o;
  const bool centred = c.pred.mean == 0 && c.pred.mean_rel == th::Relation::Equal && !none;
  o << "    mean(∂ℓ/∂x) = " << fmt("% .6e", c.b.mean) << "   theory: " << th::relation_str(c.pred.mean_rel) << " "
    << (centred ? "0" : ratio_m + " = " + fmt("%.6e", c.pred.mean)) << "   " << holds(c.mean_holds) << "\n"
    << "        confirms " << c.pred.mean_statement << "\n";
  o << "    var(∂ℓ/∂x)  = " << fmt("% .6e", c.b.var) << "   theory: " << th::relation_str(c.pred.var_rel) << " "
    << ratio_v << " = " << fmt("%.6e", c.pred.var) << "   " << holds(c.var_holds) << "\n"
    << "        confirms " << c.pred.var_statement << "\n";
  o << "    for reference: " << ratio_m << " = " << fmt("%.6e", c.g.mean / c.pred_scale) << ", " << ratio_v << " = "
    << fmt("%.6e", c.g.var / (c.pred_scale * c.pred_scale)) << "\n";
  return o.str();
}
}  // namespace

std::string format_explain(const ExplainResult& r) {
  const auto& c = r.cfg;
  const bool paper_est = !c.est.unbiased && c.est.eps == 0;
  const nl::LayerNormVariant& v = nl::layernorm_variant(c.norm);
  const bool ada = v.adaptive, none = v.identity;
  std::ostringstream o;
  o << "normlab grad explain: " << c.norm << ", H = " << c.H << ", seed " << c.seed << ", estimator: "
    << (paper_est ? "paper" : "code") << " (" << c.est.str() << ")" << (ada ? ", C = " + fmt("%g", c.C) + ", k = " + fmt("%g", c.k) : "")
    << "\n";
  o << "  x         = " << vec_str(r.x) << "\n";
  o << "  g = ∂ℓ/∂y = " << vec_str(r.g) << "\n";
  o << "  μ = " << fmt("%.6f", r.fwd.mu) << ", σ (biased, paper) = " << fmt("%.6f", r.fwd.sigma);
  if (!paper_est) o << ", s (unbiased) = " << fmt("%.6f", r.fwd.s) << ", D = s + eps = " << fmt("%.6f", r.fwd.D);
  o << "\n  y = (x − μ)/" << (paper_est ? "σ" : "D") << " = " << vec_str(r.fwd.y) << "\n\n";

  o << "(a) Tape of the forward pass (composite implementation; Detach nodes cut the gradient):\n" << r.tape << "\n";
  o << "(b) Jacobian dy/dx by autograd (row i = ∂y_i/∂x: one backward pass per unit vector e_i, retain_graph):\n"
    << matrix_str(r.autograd) << "\n";
  o << "(c) Closed form of the appendix: " << closed_form_formula(c.norm) << "\n" << matrix_str(r.paper);
  o << "    largest |autograd − closed form| = " << fmt("%.3e", r.diff_paper) << "\n";
  if (!paper_est) {
    o << (r.diff_paper > 1e-12 ? "    The code's estimator is not the paper's: the difference above is real, not rounding.\n"
                               : "    No difference: this variant computes no statistics.\n")
      << "    Closed form with the code's estimator (seed-code §1.2: D = s + eps, dD/dx_j = d_j/((H−1)s)):\n"
      << matrix_str(r.estimator) << "    largest |autograd − code closed form| = " << fmt("%.3e", r.diff_estimator)
      << "\n";
  }
  o << "\n(d) ∂ℓ/∂x = (dy/dx)ᵀ g by autograd: " << vec_str(r.grad) << "\n";
  if (ada) o << "    AdaNorm: Theorem 1 applies to g' = φ ⊙ g, the gradient LayerNorm-simple receives.\n";
  if (paper_est) {
    o << check_lines(r.check, "σ", ada, none);
  } else {
    o << "  with the estimator's scale D in place of σ:\n" << check_lines(r.check, "D", ada, none);
    o << "  with the paper's σ (the statements are about σ; this estimator divides by D):\n"
      << check_lines(r.check_paper, "σ", ada, none);
  }
  return o.str();
}

}  // namespace nlapp
