#pragma once
// Self-attention with its three input projections fused into one product (functions/self_attention.cpp).
#include <array>

#include "autograd/functions.h"

namespace nl {

/// attention(q, k, v) of the head split of q = x Wqᵀ + bq, k = x Wkᵀ + bk, v = x Wvᵀ + bv (one input x:
/// self-attention), with the three projections as one product against [Wq; Wk; Wv] writing one packed
/// [B, T, 3D] tensor that the attention reads in place, and in backward one product for dx (not three
/// summed) and one for the three weight gradients. x [B, T, Din], each weight [D, Din] with D = heads · dh,
/// each bias [D] (all three or none) -> [B, heads, T, dh] (heads-last in memory, as attention()).
/// The same values as linear() thrice and attention() up to float32 summation order. Under autocast x and
/// the weights are cast to bfloat16 (the weights' copies from the cast cache; no Cast nodes), the packed
/// projection is bfloat16 and so is its gradient, and the gradients of x, the weights and the biases are
/// float32. Throws std::invalid_argument on mismatched shapes, dtypes or devices (naming them), on `heads`
/// not dividing D, and as attention() on its options.
Variable self_attention(const Variable& x, const std::array<Variable, 3>& weights, const std::array<Variable, 3>& biases,
                        int64_t heads, const AttentionOptions& opts);

}  // namespace nl
