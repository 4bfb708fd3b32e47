#pragma once
// The fused attention's forward and backward on prepared operands, shared by attention() (q, k, v given)
// and self_attention() (q, k, v from one packed input projection): functions/attention.cpp.
#include "autograd/functions.h"
#include "tensor/ops_nn.h"

namespace nl {

/// What the fused attention's backward needs from its forward: q [B, H, Tq, dh], k [B, H, Tk, dh],
/// v [B, H, Tk, dv] (dense rows; bfloat16 under autocast), the weights P [B, H, Tq, Tk] before dropout
/// (float32 under autocast) and the row kernels' options (scale, dropout seed and offset).
struct AttentionCore {
  Tensor q, k, v, p;
  AttentionRowOptions ko;
};

/// Throws std::invalid_argument unless q, k, v and o fit attention() (attention()'s doc lists the rules).
void check_attention_args(const Variable& q, const Variable& k, const Variable& v, const AttentionOptions& o);
/// softmax(q kᵀ · scale + masks) v (Vaswani et al. 2017, Eq. 1) with dropout on the weights, per batch
/// and head, into `out` ([B, H, Tq, dv]; allocated heads-last, float32 or o.autocast_output's bfloat16
/// under autocast, when undefined). q, k, v share one dtype (bfloat16: float32 accumulation, P rounded to
/// bfloat16 as P·V's operand). Draws the dropout offset from the global generator. Returns the saved state.
AttentionCore attention_core_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o,
                                     Tensor& out);
/// The gradients of q, k, v for the output gradient `gout`, written into dq, dk, dv (each [B, H, T, d] of
/// any row strides with dense rows, float32 or bfloat16; an undefined one is skipped).
void attention_core_backward(const AttentionCore& c, const Tensor& gout, Tensor& dq, Tensor& dk, Tensor& dv);

}  // namespace nl
