#pragma once
// The Hessian nonlinearity measure of a trained LN-Net (Ni et al. 2024, the slides' Figure panels c-d:
// "H(f; x) on CIFAR-10-RL / MNIST-RL" against the group number; ../shared/docs/ni-pn-details.md §2).
// How the paper averages H was not retrieved; we report what the notes suggest [I]: the mean over
// samples x of the sum over the network's norm layers l of the closed-form H of that layer's norm
// (LN or LN-G with its eps and trained gain, lng_hessian_closed of ln_hessian.h) at the layer's input
// h_l(x), captured by forward hooks in eval mode. A linear network (norm "none") has H = 0.
#include "nn/models/ln_net.h"
#include "tensor/tensor.h"

namespace nl::lntheory {

/// Per-layer and total Hessian measure of an LnNet on a batch (see the file comment).
struct LnNetHessian {
  std::vector<double> per_layer;  ///< mean over samples of H at norm layer l
  double total = 0;               ///< sum of per_layer: the mean over samples of sum_l H_l
  int64_t samples = 0;
};

/// Evaluates `net` on `images` [B, ...] (eval mode, no gradients; the mode is restored) and returns
/// the measure. The norm must be "none" (H = 0), "layernorm" (G = 1), "lng" or "groupnorm" with
/// norm_opts "groups" (same function on features), with its "eps" (default 1e-5) inside the sqrt
/// and biased variance. Throws std::invalid_argument for another norm (naming the ones supported)
/// or an empty batch.
LnNetHessian ln_net_hessian(LnNet& net, const Tensor& images);

}  // namespace nl::lntheory
