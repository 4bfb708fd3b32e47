#pragma once
// The LayerNorm family of Xu et al. 2019, "Understanding and Improving Layer Normalization"
// (NeurIPS 2019), over the last dim of size H:
//
//   forward (paper Eq. 1 without gain/bias; Ba et al. 2016):
//     mu = (1/H) sum_i x_i,   sigma = sqrt((1/n) sum_i (x_i - mu)^2),   y = (x - mu) / D,
//     n = H (biased: paper and torch) or H - 1 (unbiased: released AdaNorm code, torch.std),
//     D = sqrt(sigma^2 + eps) (eps_inside: torch) or sigma + eps (released AdaNorm code),
//     z = g * y + b with a per-feature gain g and bias b when `affine` (LayerNorm; without: LayerNorm-simple).
//
//   backward (Theorem 1, appendix B; with eps = 0, biased sigma; g = dL/dy, y = (x - mu)/sigma):
//     LayerNorm-simple  dL/dx = W1 g,  W1 = (1/sigma)(I - y y^T/H - 1 1^T/H)         (Eq. 8)
//     detach-mean       dL/dx = W2 g,  W2 = (1/sigma)(I - y y^T/H)                   (Eq. 14)
//     detach-variance   dL/dx = W3 g,  W3 = (1/sigma)(I - 1 1^T/H)                   (Eq. 19)
//     DetachNorm        dL/dx = g / sigma                                             (Eq. 5)
//   With a general estimator/eps (seed-code §1.2): with d = x - mu, gbar = mean(g), S = sum_i g_i d_i,
//     dL/dx_j = (g_j - gbar)/D - S d_j / (n s D^2),  s = sigma (eps on std) or D (eps inside),
//   where detach-mean drops gbar and detach-variance drops the S-term.
//   Detaching the mean keeps the std's own gradient: the std is computed from x (torch.std centres
//   internally), so only the explicit "- mu" of the numerator is cut.
//
// Two implementations, tested equal (tests/nn/test_norm_equivalence.cpp):
//   composite: primitive Variable ops (mean, sub, square, sum, sqrt, div) with nl::detach nodes exactly
//              where a variant cuts gradient, so Tape::dump() shows the cut; a float32 input is
//              normalised in float64 between two Cast nodes (statistics in double, as the fused kernel);
//   fused:     nl::layer_norm_fused, one kernel forward and the closed-form backward above.
#include <string>

#include "nn/module.h"
#include "nn/norm/norm_options.h"

namespace nl {

/// Which implementation computes the normalisation.
enum class NormImpl { Composite, Fused };
/// "composite" / "fused".
std::string norm_impl_name(NormImpl impl);
/// Every implementation's name, {"fused", "composite"} (the CLI's --impl choices).
const std::vector<std::string>& norm_impl_names();
/// Parses one of norm_impl_names(); throws std::invalid_argument otherwise, listing them.
NormImpl parse_norm_impl(const std::string& s);

/// Options of the LayerNorm family; the named variants differ only in these flags.
struct LayerNormConfig {
  bool affine = true;        ///< per-feature gain (init 1) and bias (init 0) after normalising
  bool detach_mean = false;  ///< cut the gradient through mu in the numerator x - mu
  bool detach_std = false;   ///< cut the gradient through the denominator D
  double eps = 1e-5;
  bool unbiased = false;     ///< std with 1/(H-1) (AdaNorm code) instead of 1/H (paper, torch)
  bool eps_inside = true;    ///< D = sqrt(var + eps) (torch) instead of std + eps (AdaNorm code)
  NormImpl impl = NormImpl::Fused;

  /// The flags of a LayerNorm-family member of the norm table (factory.h, layernorm_variant): "layernorm"
  /// (affine), "layernorm-simple" (no gain/bias), "detachnorm" (no gain/bias, mean and std detached),
  /// "detach-mean", "detach-variance" (std detached) — the last three without gain/bias, like the
  /// released code's `nowb` path — and "adanorm" (LayerNorm-simple underneath). Throws
  /// std::invalid_argument on another name, naming the family.
  static LayerNormConfig variant(const std::string& name);
  /// "biased, eps=1e-05 inside sqrt, fused" style summary.
  std::string str() const;
};

/// The shared kernel path of the whole family (LayerNorm and AdaNorm): y = (x - mu)/D over the last
/// dim, no gain/bias, with cfg's detach flags, estimator and eps, via cfg.impl. x [..., H] -> y [..., H].
/// Throws std::invalid_argument if x has no dims or H is too small (H < 2 with `unbiased`).
Variable layer_norm_normalize(const Variable& x, const LayerNormConfig& cfg);

/// LayerNorm-family layer over the last dim d: x [..., d] -> z [..., d] (see the top of this file).
/// Parameters when cfg.affine: "weight" [d] (gain, init 1) and "bias" [d] (init 0).
/// Throws std::invalid_argument on d < 1, eps < 0, or an input whose last dim is not d.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t d, LayerNormConfig cfg = {}, DType dtype = DType::Float32);
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  const LayerNormConfig& config() const { return cfg_; }
  /// Switches between the composite and fused implementation (same results).
  void set_impl(NormImpl impl) { cfg_.impl = impl; }
  Variable weight, bias;  ///< undefined without affine
  int64_t dim;

 private:
  LayerNormConfig cfg_;
};

/// The family's estimator options of a norm-table entry ("impl", "eps", "unbiased", "eps_inside") applied
/// to `c`; throws std::invalid_argument on a value of the wrong type or an unknown impl.
LayerNormConfig with_estimator_options(LayerNormConfig c, const NormOptions& o);
/// Norm-table factory of layernorm, layernorm-simple, detachnorm, detach-mean and detach-variance: the
/// variant's LayerNormConfig with o's estimator options and "affine".
std::shared_ptr<Module> make_layer_norm(int64_t d, const NormOptions& o);

}  // namespace nl
