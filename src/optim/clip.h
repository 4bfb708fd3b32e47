#pragma once
// Gradient clipping by global L2 norm (torch.nn.utils.clip_grad_norm_ semantics).
#include <vector>

#include "autograd/variable.h"

namespace nl {

/// Total L2 norm of the gradients of `params` (parameters without a gradient contribute nothing),
/// accumulated in double over all elements: sqrt(Σ_p Σ_i g_pi²). Returns 0 when no gradient exists.
double grad_norm(const std::vector<Variable>& params);

/// Clips gradients by their global L2 norm as torch.nn.utils.clip_grad_norm_(params, max_norm):
/// total = grad_norm(params); coef = max_norm / (total + 1e-6); if coef < 1 every gradient is replaced
/// (out of place — leaf gradients are never modified in place) by grad · coef. Returns the total norm
/// measured before clipping. A non-finite total is returned as is and, like torch's default
/// (error_if_nonfinite=false), the grads are still multiplied by coef (so NaN/inf spread into them).
/// Throws std::invalid_argument for a negative or NaN max_norm.
double clip_grad_norm_(const std::vector<Variable>& params, double max_norm);

/// clip_grad_norm_ without reading anything back: the total norm is returned as a 0-d float64 tensor on
/// the gradients' device, and on a device the clipping decision (coef < 1, or NaN) is taken there too
/// (grad · coef where it clips, grad unchanged where not), so a training step never waits for the host.
/// On the cpu the same arithmetic as clip_grad_norm_ (host sums; the same bits). Gradients on several
/// devices throw std::invalid_argument; throws as clip_grad_norm_ otherwise.
Tensor clip_grad_norm_async_(const std::vector<Variable>& params, double max_norm);

}  // namespace nl
