#pragma once
// Relative multi-head attention of Transformer-XL (Dai et al. 2019, Sec. 3.3; the released code's
// RelPartialLearnableMultiHeadAttn in pytorch/mem_transformer.py), batch first. With the memory
// m [B, M, D] of the previous segment and the current hidden states h [B, T, D], the keys and values
// come from the K = M + T states [m; h] and query i (absolute position M + i) scores key j as
//   A_ij = (q_i + u) . k_j  +  (q_i + v) . W_r R_{M+i-j}                       (Dai et al. Eq. in 3.3)
// where R_d is the sinusoidal embedding of the distance d and u, v are the learned biases (shared by
// all layers, as the code's default untie_r = False). Keys j > M + i are masked (causal).
#include "nn/cached_constant.h"
#include "nn/linear.h"

namespace nl {

/// Transformer-XL's _rel_shift on the last two dims of x [..., Tq, K] (K >= Tq) whose column c holds
/// the score against distance K - 1 - c: prepend a zero column, view as [..., K + 1, Tq], drop the
/// first row, view back as [..., Tq, K]. Afterwards out[..., i, j] = x[..., i, j + Tq - 1 - i] for
/// j <= i + K - Tq (distance K - Tq + i - j >= 0); the entries above that diagonal are shifted-in
/// values that the causal mask must hide. Throws std::invalid_argument on rank < 2 or K < Tq.
Variable rel_shift(const Variable& x);

/// Transformer-XL's PositionalEmbedding for the distances K-1, K-2, ..., 0 (row c = distance K-1-c):
/// [K, d] with row c = [sin(p f_0), ..., sin(p f_{d/2-1}), cos(p f_0), ..., cos(p f_{d/2-1})],
/// p = K-1-c, f_i = 10000^(-2i/d). Throws std::invalid_argument unless d is even and >= 2 and K >= 1.
Tensor xl_relative_positions(int64_t K, int64_t d, DType dtype);

/// The relative attention block (see the file comment): q_net on h, kv_net on [m; h], r_net on the
/// relative positions, scaled dot-product with scale 1/sqrt(d_head), softmax, attention dropout, o_net.
/// No residual, dropout or norm (the layer adds them). Parameters (no biases, as the code):
/// q_net [H dh, D], kv_net [2 H dh, D], r_net [H dh, D], o_net [D, H dh], all N(0, 0.02) (the code's
/// init_std). Throws std::invalid_argument on sizes < 1 or dropout outside [0, 1).
class RelMultiheadAttention : public Module {
 public:
  RelMultiheadAttention(int64_t d_model, int64_t n_heads, int64_t d_head, double attention_dropout);
  /// h [B, T, D]; mem [B, M, D] or undefined (M = 0); pos [K, D] = xl_relative_positions(M + T, D)
  /// (dropout may be applied by the caller); u, v [H, dh] -> [B, T, D]. Throws std::invalid_argument
  /// on mismatched shapes (naming them).
  Variable forward(const Variable& h, const Variable& mem, const Variable& pos, const Variable& u, const Variable& v);
  std::string extra_repr() const override;

  std::shared_ptr<Linear> q_net, kv_net, r_net, o_net;
  int64_t d_model, n_heads, d_head;
  double dropatt;

 private:
  CachedConstant causal_mask_;  ///< [1, 1, T, K]: 1 where key j > i + M is blocked, kept on the device
};

}  // namespace nl
