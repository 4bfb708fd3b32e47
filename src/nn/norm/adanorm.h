#pragma once
// AdaNorm (Xu et al. 2019, Sec. 5, Eq. 9):
//
//   forward:  y = (x - mu)/D  (the LayerNorm-simple output; layer_norm.h),
//             z = phi(y) ⊙ y,  phi(y) = C (1 - k y),  with phi(y) DETACHED (treated as a constant in
//             backward, as the paper prescribes). The released code computes C * y * (1 - k * sg(y)),
//             which is the same function and gradient. k = 1/10 in the paper (Chebyshev argument);
//             C is the scale hyper-parameter (2 for the paper's MNIST CNN and IWSLT14 De-En).
//   backward: dL/dx = J_LN-simple(x)^T (phi(y) ⊙ g), g = dL/dz: LayerNorm-simple's backward (W1 in
//             Theorem 1 when eps = 0, biased std) applied to C (1 - k y) ⊙ g. mu and the std are NOT
//             detached.
//
// Composite: y * detach(C * (1 - k*y)); fused: y from nl::layer_norm_fused, then the same detached
// factor. There is no gain/bias.
#include "nn/norm/layer_norm.h"

namespace nl {

/// Options of AdaNorm; `norm` holds the estimator knobs (eps, unbiased, eps_inside, impl).
/// Its affine and detach flags are ignored (AdaNorm is built on LayerNorm-simple).
struct AdaNormConfig {
  double C = 1.0;
  double k = 0.1;
  LayerNormConfig norm = LayerNormConfig::variant("layernorm-simple");
};

/// AdaNorm over the last dim d: x [..., d] -> z [..., d]. No parameters.
/// Throws std::invalid_argument on d < 1, eps < 0, or an input whose last dim is not d.
class AdaNorm : public Module {
 public:
  explicit AdaNorm(int64_t d, AdaNormConfig cfg = {});
  /// Convenience: AdaNorm(d, {C, k, norm}).
  AdaNorm(int64_t d, double C, double k = 0.1, LayerNormConfig norm = LayerNormConfig::variant("layernorm-simple"));
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  const AdaNormConfig& config() const { return cfg_; }
  void set_impl(NormImpl impl) { cfg_.norm.impl = impl; }
  int64_t dim;

 private:
  AdaNormConfig cfg_;
};

/// Norm-table factory of "adanorm": AdaNorm with o's "C" (1.0), "k" (0.1) and the family's estimator options.
std::shared_ptr<Module> make_adanorm(int64_t d, const NormOptions& o);

}  // namespace nl
