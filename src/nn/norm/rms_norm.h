#pragma once
// RMSNorm (Zhang & Sennrich 2019, Eq. 4) over the last d features of each token / sample:
//
//   RMS(x) = sqrt((1/d) sum_i x_i^2 + eps),   z = g ⊙ x / RMS(x)  (+ b with the "bias" option).
//
// The paper drops LayerNorm's re-centring and keeps the gain g (init 1); the bias is optional there and
// off by default here, as in torch.nn.RMSNorm. eps sits inside the sqrt (1e-5 as every norm here; the
// authors' code uses 1e-8, pass {"eps": 1e-8} to match it). Exact gradient by autograd.
//
// The same function without gain is PowerNorm's GroupScaling1D "layer scale" with G groups
// (seed-code §2.1: x / sqrt(mean over the group of x^2 + 1e-5), per token) — see group_scale().
#include "nn/norm/masked_norm.h"
#include "nn/norm/norm_options.h"

namespace nl {

/// Options of RMSNorm.
struct RMSNormConfig {
  double eps = 1e-5;
  bool affine = true;  ///< the gain "weight" [d] (init 1)
  bool bias = false;   ///< an additive "bias" [d] (init 0) as well (needs affine)
};

/// RMSNorm over d features: [N, d], [B, T, d] or [N, d, H, W] (per pixel over channels) -> same shape.
/// Throws std::invalid_argument on d < 1, eps < 0, bias without affine, or another layout.
class RMSNorm : public Module {
 public:
  RMSNorm(int64_t d, RMSNormConfig cfg = {}, DType dtype = DType::Float32);
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  Variable weight, bias;  ///< [d]; weight undefined without affine, bias without the bias option
  int64_t dim;

 private:
  RMSNormConfig cfg_;
};

/// GroupScaling1D of the released PowerNorm code (seed-code §2.1), on rows [R, D]: each of G contiguous
/// groups of each row divided by sqrt(mean over the group of x^2 + eps); no affine; applied to every row,
/// pads included. Throws std::invalid_argument unless G divides D.
Variable group_scale(const Variable& rows, int64_t groups, double eps = 1e-5);

/// Norm-table factory of "rmsnorm": o's "eps", "affine" and "bias" (false).
std::shared_ptr<Module> make_rms_norm(int64_t d, const NormOptions& o);

}  // namespace nl
