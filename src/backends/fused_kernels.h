#pragma once
// FusedKernels: the optional kernels of a backend (softmax, dropout, conv helpers, fused cross-entropy,
// LayerNorm family, attention rows, Adam). A backend that does not provide them gets CompositeKernels
// (backends/composite/composite_kernels.h), which computes each one from the backend's core kernels, so
// a new backend can start with the core (backend.h) and grow. Contracts are the same for every
// implementation; outputs are contiguous unless stated otherwise.
#include <cstdint>

#include "backends/desc.h"
#include "tensor/layer_norm_options.h"

namespace nl {

/// Parameters of a 2-D convolution / pooling window over NCHW images.
struct Conv2dGeom {
  int64_t N, C, H, W;      ///< input
  int64_t kh, kw;          ///< window
  int64_t sh, sw, ph, pw;  ///< stride, zero padding
  int64_t OH() const { return (H + 2 * ph - kh) / sh + 1; }
  int64_t OW() const { return (W + 2 * pw - kw) / sw + 1; }
};

/// Options of the fused LayerNorm-family kernel (Xu et al. 2019, Eq. 1 and Theorem 1): the plain
/// LayerNormOptions the tensor front end takes (tensor/layer_norm_options.h, no dependencies).
using NormKernelOpts = LayerNormOptions;

/// Hyper-parameters of one fused Adam/AdamW update (Kingma & Ba 2015, Alg. 1; Loshchilov & Hutter 2019).
struct AdamKernelOpts {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled;  ///< AdamW (decay applied to the weights) instead of L2 added to the gradient
  int64_t step;    ///< 1-based step for bias correction
};

/// Shape and options of the fused attention row kernels (Vaswani et al. 2017, Eq. 1). The scores are
/// rows r = (b * heads + h) * tq + i of a contiguous [batch * heads * tq, tk] matrix, query i, key j.
/// Key j is blocked for row r when key_padding[b, j] != 0, attn_mask[i, j] == -inf, or (causal)
/// j > i + (tk - tq). Dropout keeps element (r, j) when T(u) > T(dropout) for u = the uniform number
/// of counter offset + r * tk + j of stream seed (the layout of a random fill of [B, H, tq, tk]).
struct AttentionKernelOpts {
  int64_t batch = 0, heads = 0, tq = 0, tk = 0;
  double scale = 1.0;     ///< multiplies the raw scores q . k before the mask is added
  bool causal = false;    ///< block key j > i + (tk - tq)
  double dropout = 0.0;   ///< drop probability on the weights, in [0, 1); 0 = no dropout
  uint64_t seed = 0, offset = 0;  ///< counter-based stream of the dropout mask (see the struct comment)
};

/// Throws std::invalid_argument naming `kernel` for options out of range (negative sizes, dropout
/// outside [0, 1)) or scores that are not contiguous float with batch*heads*tq*tk elements.
void check_attention_args(const Desc& scores, const AttentionKernelOpts& o, const char* kernel);

/// Throws std::invalid_argument naming `kernel` unless `a` (the operand the kernel computes in: x, or gout
/// in the backward) is contiguous float32 or float64, `b` (out, gx or the saved out) is contiguous of its
/// size in its dtype or, beside float32, in bfloat16, `bias` (when its data is set) is contiguous [N] of
/// a's dtype with N the last dim of `a`, and 0 <= p < 1. The shared check of bias_relu_dropout and its
/// backward.
void check_bias_relu_args(const Desc& a, const Desc& b, const Desc& bias, double p, const char* kernel);

/// The optional (fused) kernels. Methods throw std::invalid_argument / std::out_of_range on bad input
/// as documented; on an asynchronous device an index error may surface at the next synchronisation
/// instead (Backend::synchronize), naming the kernel.
class FusedKernels {
 public:
  virtual ~FusedKernels() = default;

  /// Row softmax / log-softmax over the last dim of contiguous [rows, cols]; no-op when empty.
  virtual void softmax(const Desc& out, const Desc& in, bool log) = 0;
  /// Gradient of softmax (log=false) or log-softmax (log=true) given its output y and dL/dy.
  virtual void softmax_backward(const Desc& gin, const Desc& gout, const Desc& y, bool log) = 0;
  /// Inverted dropout with a regenerated mask: out[i] = in[i] / (1 - p) where uniform01(seed, offset + i)
  /// > p (the counter stream of Backend::random), else 0. The same call with the gradient as `in` is the
  /// backward, so no mask is stored. Contiguous in/out of one float dtype (may alias); 0 <= p < 1.
  virtual void dropout(const Desc& out, const Desc& in, double p, uint64_t seed, uint64_t offset) = 0;
  /// The residual connection around dropout in one pass: out[i] = residual[i] + dropout(in)[i], the same
  /// mask, scale and float operations as dropout followed by an add (so the same bits). Contiguous, one
  /// size and float dtype; out may alias residual or in; 0 <= p < 1.
  virtual void dropout_add(const Desc& out, const Desc& residual, const Desc& in, double p, uint64_t seed,
                           uint64_t offset) = 0;
  /// The Transformer FFN activation in one pass: out = dropout(relu(x + bias)) over contiguous [rows, N]
  /// (`bias` contiguous [N], or data == nullptr for none), with dropout's counter stream and compare
  /// (element i kept when uniform01(seed, offset + i) > p), so it equals the three ops apart; p = 0: no
  /// dropout. x float32 or float64; out in x's dtype (may alias x) or, for float32 x, bfloat16: the
  /// float32 result rounded once (what a bfloat16 product reads under autocast); 0 <= p < 1.
  virtual void bias_relu_dropout(const Desc& out, const Desc& x, const Desc& bias, double p, uint64_t seed,
                                 uint64_t offset) = 0;
  /// Its backward from the saved output alone: gx = out > 0 ? gout / (1 - p) : 0 (out > 0 exactly where
  /// the ReLU passed and dropout kept), and gbias[N] = Σ_rows gx unless gbias.data == nullptr
  /// (overwritten, not accumulated), summed from the float values before any rounding. gout float32 or
  /// float64; out and gx in its dtype (gx may alias gout) or, for float32 gout, bfloat16 (out widened
  /// exactly; gx rounded once).
  virtual void bias_relu_dropout_backward(const Desc& gx, const Desc& gbias, const Desc& gout, const Desc& out,
                                          double p) = 0;
  /// im2col of contiguous NCHW input into cols [C*kh*kw, N*OH*OW].
  virtual void im2col(const Desc& cols, const Desc& in, const Conv2dGeom& g) = 0;
  /// Adjoint of im2col: accumulates cols [C*kh*kw, N*OH*OW] into zeroed gin (NCHW).
  virtual void col2im(const Desc& gin, const Desc& cols, const Conv2dGeom& g) = 0;
  /// Max pooling; `idx` (int64, same shape as out) holds the flat h*W+w argmax per window.
  virtual void maxpool2d(const Desc& out, const Desc& idx, const Desc& in, const Conv2dGeom& g) = 0;
  /// Accumulates gout into zeroed gin at the argmax positions `idx` of maxpool2d.
  virtual void maxpool2d_backward(const Desc& gin, const Desc& gout, const Desc& idx, const Conv2dGeom& g) = 0;
  /// Fused cross-entropy over contiguous logits [N, C] (float64, float32, or bfloat16 read widened with
  /// float32 math), targets int64 [N]: loss[i] = (1-eps)·(lse_i - x_i,t) + eps·(lse_i - mean_c x_ic) (0 when
  /// target == ignore_index; Szegedy et al. 2016 smoothing) and the softmax row statistics saved for
  /// backward, stats [N, 2] = (m_i, 1/Σ_c exp(x_ic - m_i)) with m_i the row max. loss and stats are in the
  /// compute dtype (float32 for bfloat16 logits). With `grad` (data != nullptr: [N, C] in the logits'
  /// dtype) it also writes what cross_entropy_backward would write for gloss[i] = grad_scale on every row
  /// (the CPU kernel from the terms exp(x - m) it has computed anyway, so the loss's usual backward needs no
  /// second pass over the logits); otherwise no [N, C] tensor is written. Throws std::out_of_range for a
  /// target outside [0, C) that is not ignore_index.
  virtual void cross_entropy(const Desc& loss, const Desc& stats, const Desc& logits, const Desc& target,
                             int64_t ignore_index, double label_smoothing, const Desc& grad, double grad_scale) = 0;
  /// dlogits [N, C] (the logits' dtype; bfloat16 rounded once) = gloss[i]·(p_i - q_i), p_i = exp(x_i - m_i)·
  /// (1/Σ) recomputed from the logits and cross_entropy's stats, q the smoothed one-hot target (0 for
  /// ignored rows).
  virtual void cross_entropy_backward(const Desc& glogits, const Desc& gloss, const Desc& logits, const Desc& stats,
                                      const Desc& target, int64_t ignore_index, double label_smoothing) = 0;
  /// Fused LayerNorm family forward over the last dim of contiguous [rows, H]: y = g ⊙ (x - mu)/D + b
  /// (Xu et al. 2019, Eq. 1), mean[rows], rstd[rows] (rstd = 1/D). `weight` g and `bias` b are contiguous
  /// [H] or a Desc with data == nullptr (absent: g = 1, b = 0).
  virtual void layer_norm(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x, const Desc& weight,
                          const Desc& bias, const NormKernelOpts& o) = 0;
  /// Closed-form backward of layer_norm (Xu et al. 2019, appendix B, W1/W2/W3) applied to g ⊙ gy: gx [rows, H];
  /// with a weight, gweight[H] = Σ_rows gy ⊙ (x - mu)/D; gbias[H] = Σ_rows gy. gweight / gbias may be absent
  /// (data == nullptr) and are overwritten, not accumulated. `accumulate`: gx holds a gradient summed so far
  /// (the autograd engine's buffer for x) and gets gx[i] + (the gradient)[i], the one float addition a
  /// separate add would make (the same bits), in the pass that writes it.
  virtual void layer_norm_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                   const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                   const NormKernelOpts& o, bool accumulate) = 0;
  /// The LayerNorm family over channel groups of images, in their NCHW layout (LN-G-Position, Ni et al.
  /// 2024; ni-pn-details.md §4): x contiguous [N, C, P] (P = H·W pixels), C = G·n; each (image, group g,
  /// pixel p) normalises the n values x[:, g·n + j, p], j < n, as layer_norm normalises a row (the same
  /// options), and the affine is per channel: y[:, c, p] = weight[c] ⊙ (x - mu)/D + bias[c]. mean and rstd
  /// are contiguous [N, G, P]; weight and bias [C] or data == nullptr. The same function as layer_norm on
  /// the permuted rows [N·P·G, n] (without a permute); 1 <= G, G divides C, n >= 2 when unbiased.
  virtual void layer_norm_channels(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x,
                                   const Desc& weight, const Desc& bias, int64_t groups, const NormKernelOpts& o) = 0;
  /// Backward of layer_norm_channels: layer_norm_backward's closed form per (image, group, pixel), gx [N, C, P];
  /// gweight[c] = Σ_{N, P} gy ⊙ (x - mu)/D, gbias[c] = Σ_{N, P} gy (absent when data == nullptr; overwritten);
  /// `accumulate` as layer_norm_backward's.
  virtual void layer_norm_channels_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                            const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                            int64_t groups, const NormKernelOpts& o, bool accumulate) = 0;
  /// BatchNorm's training forward over the channels of images (Ioffe & Szegedy 2015, Alg. 1): x contiguous
  /// [N, C, P] (P = H·W); per channel c the mean mu_c and biased variance var_c of its N·P values (summed
  /// in double), y = weight[c]·(x - mu_c)·rstd_c + bias[c] with rstd_c = 1/sqrt(var_c + eps). Writes mean,
  /// var and rstd, each contiguous [C]; weight and bias [C] or data == nullptr. N·P >= 1.
  virtual void batch_norm_channels(const Desc& y, const Desc& mean, const Desc& var, const Desc& rstd, const Desc& x,
                                   const Desc& weight, const Desc& bias, double eps) = 0;
  /// Its backward through the batch statistics: with g = weight ⊙ gy and n̂ = (x - mu)·rstd per channel,
  /// gx = rstd·(g - mean(g) - n̂·mean(g·n̂)) (means over the channel's N·P values), gweight[c] = Σ gy·n̂,
  /// gbias[c] = Σ gy (absent when data == nullptr; overwritten); `accumulate` as layer_norm_backward's.
  virtual void batch_norm_channels_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                            const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                            bool accumulate) = 0;
  /// Attention forward row kernel, per row of `scores` (contiguous [batch*heads*tq, tk], the raw q k^T):
  /// x_j = scale * scores_j + attn_mask[i, j]; writes P = softmax over the unblocked keys into `probs`
  /// (blocked keys: 0; a row with every key blocked: all 0; may alias `scores`) and the dropped weights
  /// P_j * keep_j / (1 - dropout) into `dropped` (same shape; ignored when o.dropout == 0, where they are
  /// P). `key_padding` is [batch, tk] and `attn_mask` [tq, tk], contiguous, in the scores' dtype, or a
  /// Desc with data == nullptr when absent. Where attention_bf16_operands(), `dropped` may instead be
  /// bfloat16 beside float32 scores: then it is always written, as the operand of the product P·V under
  /// autocast, P_j * keep_j / (1 - dropout) (P_j without dropout) rounded once to nearest even (the bits of
  /// the float32 value's cast). Float dtypes only; throws std::invalid_argument on a dtype, shape or option
  /// mismatch (before any work).
  virtual void attention_softmax(const Desc& probs, const Desc& dropped, const Desc& scores,
                                 const Desc& key_padding, const Desc& attn_mask, const AttentionKernelOpts& o) = 0;
  /// Attention backward row kernel: from the weights `probs` = P of attention_softmax and `gprobs` =
  /// dL/d(dropped weights) = dO V^T (same [rows, tk] layout), regenerates the dropout mask and writes
  ///   gscores_j = scale * P_j * (dP_j - sum_k P_k dP_k),  dP_j = gprobs_j * keep_j / (1 - dropout)
  /// (the gradient w.r.t. the raw scores; 0 where P is 0, i.e. on blocked keys) and, when o.dropout > 0,
  /// the dropped weights into `dropped` (for dV = dropped^T dO; ignored when o.dropout == 0; a bfloat16
  /// `dropped` is always written, as attention_softmax's). `gscores` may alias `gprobs`. Same checks as
  /// attention_softmax.
  virtual void attention_softmax_backward(const Desc& gscores, const Desc& dropped, const Desc& gprobs,
                                          const Desc& probs, const AttentionKernelOpts& o) = 0;
  /// Whether attention_softmax and its backward take a bfloat16 `dropped` beside float32 scores (the
  /// product's operand written in the row pass: no float32 weights and no cast pass). False unless a
  /// backend's kernels say so (the CPU's do); the front end then passes float32 weights and casts them.
  virtual bool attention_bf16_operands() const { return false; }
  /// One Adam/AdamW step in place on contiguous param, grad, m, v (same dtype and size).
  virtual void adam_step(const Desc& param, const Desc& grad, const Desc& m, const Desc& v,
                         const AdamKernelOpts& o) = 0;
};

}  // namespace nl
