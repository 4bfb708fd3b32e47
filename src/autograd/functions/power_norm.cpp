// PowerNorm's normalisation with the approximate backward (Shen et al. 2020, Algorithm 2, Eq. 8-13;
// seed-code §2.2-2.3 for the released PowerFunction). Forward and backward side by side; the module
// (nn/norm/power_norm.cpp) chooses the scales and keeps the running statistics: the backward only
// computes the new E and hands it to the module after the pass (post_backward.h).
#include "autograd/functions.h"
#include "autograd/post_backward.h"

namespace nl {

Variable power_norm_fused(const Variable& x, const Tensor& fwd_scale, const Tensor& bwd_scale, const Tensor& ema_gz,
                          double alpha_bwd, std::shared_ptr<PowerNormEUpdate> update) {
  if (x.dim() != 2)
    throw std::invalid_argument("power_norm: input must be rows [R, D], got " + shape_str(x.shape()));
  if (!update)
    throw std::invalid_argument("power_norm: `update` is null; pass the module's PowerNormEUpdate, which applies "
                                "the new E to the module's ema_gz buffer after backward");
  const Shape d{x.size(1)};
  for (const Tensor* t : {&fwd_scale, &bwd_scale, &ema_gz})
    if (!t->defined() || t->shape() != d)
      throw std::invalid_argument("power_norm: scales and E must have shape " + shape_str(d) + ", got " +
                                  (t->defined() ? shape_str(t->shape()) : std::string("undefined")));
  // Forward (Eq. 8): z = x / sqrt(psi^2 + eps), the divisor fixed by the caller.
  Tensor z = div(x.data(), fwd_scale.to(x.dtype()));
  const double nu_scale = 1.0 - alpha_bwd;
  std::string note = "alpha_bwd=" + note_number(alpha_bwd);
  return make_result(
      z, "PowerNormFused", {x},
      [z, bwd_scale, ema_gz, nu_scale, update](const Tensor& g, const std::vector<bool>&) {
        if (update->next_E.defined())
          throw std::runtime_error(
              "power_norm: a second backward reached this PowerNorm's E buffer (ema_gz) before the update of the "
              "first was applied: one PowerNorm ran two forwards in one graph, so both backwards would read the "
              "same stale E. Call backward after each forward of a PowerNorm (or use one module per use).");
        const Tensor E = ema_gz.to(g.dtype());
        // Eq. 11: g~ = g - nu ⊙ z, nu = (1 - alpha_bwd) E (seed-code §2.3: the code's E = nu / (1 - a)).
        Tensor gt = sub(g, mul(affine(E, nu_scale, 0.0), z));
        // Eq. 13 as the code writes it: E <- E + mean_rows(g~ ⊙ z), over every row (pads included);
        // the module applies it once the pass has finished.
        update->next_E = add(E, mean(mul(gt, z), {0})).to(ema_gz.dtype());
        queue_post_backward([update] {
          const Tensor next = std::move(update->next_E);
          update->next_E = Tensor();
          if (update->apply) update->apply(next);
        });
        // Eq. 12: dL/dx = g~ / scale.
        return std::vector<Tensor>{div(gt, bwd_scale.to(g.dtype()))};
      },
      {saved(z, "output z"), saved(bwd_scale, "backward scale"), saved(ema_gz, "PowerNorm E buffer (ema_gz)")}, note);
}

}  // namespace nl
