#pragma once
// The front end of the fused (nn) kernels: softmax and cross-entropy, dropout and its fused neighbours,
// the LayerNorm family, attention rows and the per-head GEMM grid, convolution and pooling helpers, and
// the Adam step, on Tensors (no autograd). Like the core ops in tensor/ops.h, each op checks its shapes,
// dtypes and devices once (std::invalid_argument naming the op, both shapes or dtypes and the fix) and
// dispatches to `backend_for(device).fused()`; autograd's functions and the optimizers call only these,
// never a backend. Implementations: ops_softmax.cpp, ops_dropout.cpp, ops_norm.cpp, ops_attention.cpp,
// ops_conv.cpp, ops_optim.cpp.
//
// Dtype policy (autocast, tensor/autocast.h): the casts are tape nodes recorded by the autograd
// functions before they call these entries, which run in their operands' dtype; each entry reports that
// dtype to an active AutocastTrace (`observe`), so a test can check that the table is what runs.
#include <optional>
#include <cstdint>

#include "tensor/layer_norm_options.h"
#include "tensor/tensor.h"

namespace nl {

// ---- softmax and cross-entropy (ops_softmax.cpp) ----

/// Gradient of softmax (log = false) or log_softmax (log = true) along `dim`, from its output y and
/// dL/dy `gy` (same shape): dL/dx = y ⊙ (gy - Σ gy ⊙ y), or gy - exp(y) Σ gy for log-softmax.
/// Float dtypes; throws std::invalid_argument on a shape, dtype or device mismatch.
Tensor softmax_backward(const Tensor& y, const Tensor& gy, int64_t dim, bool log);

/// Per-row result of the fused cross-entropy.
struct CrossEntropyRows {
  Tensor loss;   ///< [N]: (1-eps)·(-log p_target) + eps·mean_c(-log p_c); 0 on ignored rows
  Tensor stats;  ///< [N, 2] softmax row statistics (max m, 1/Σ exp(x - m)), saved for the backward
  Tensor grad;   ///< [N, C] (logits' dtype) with a grad_scale: cross_entropy_backward for gloss = grad_scale
};
/// Fused cross-entropy with label smoothing eps (Szegedy et al. 2016) of logits [N, C] against int64
/// targets [N] on the logits' device (targets stay where the batch is: no host copy). Logits may be
/// float64, float32 or bfloat16 (read widened, float32 math: the loss and stats are then float32), so a
/// vocabulary projection's bfloat16 output is never cast as a whole. Throws std::invalid_argument on other
/// shapes or dtypes, a target on another device or eps outside [0, 1); std::out_of_range for a target
/// outside [0, C) that is not ignore_index (on an asynchronous device: at the next synchronisation).
/// With `grad_scale`, also the gradient the backward gives for gloss[i] = *grad_scale on every row (`grad`:
/// the same values; on the CPU from the forward's own exponentials, so the usual backward — the mean loss,
/// backward from 1 — costs no second pass over the logits).
CrossEntropyRows cross_entropy_rows(const Tensor& logits, const Tensor& target, int64_t ignore_index,
                                    double label_smoothing, std::optional<double> grad_scale = std::nullopt);
/// dL/dlogits [N, C], in the logits' dtype (bfloat16 rounded once) = gloss[i] · (p_i - q_i), q the smoothed
/// one-hot target (0 on ignored rows), p the softmax recomputed from the logits and cross_entropy_rows'
/// stats; gloss [N] in the stats' dtype. Throws std::invalid_argument on mismatched shapes or dtypes.
Tensor cross_entropy_backward(const Tensor& gloss, const Tensor& logits, const Tensor& stats, const Tensor& target,
                              int64_t ignore_index, double label_smoothing);

// ---- dropout and its fused neighbours (ops_dropout.cpp) ----
// The keep mask is a pure function of (seed, offset + i): element i is kept when the uniform number of
// counter offset + i (Backend::random's stream) is > p; kept elements are scaled by 1/(1-p). The same
// call on a gradient is the backward, so no mask is stored. 0 <= p < 1 (std::invalid_argument otherwise).

/// Inverted dropout of x (any shape, float dtype) -> a new contiguous tensor of x's shape.
Tensor dropout(const Tensor& x, double p, uint64_t seed, uint64_t offset);
/// residual + dropout(x) in one pass, bit for bit the two ops apart; residual and x of one shape, dtype
/// and device.
Tensor dropout_add(const Tensor& residual, const Tensor& x, double p, uint64_t seed, uint64_t offset);
/// The Transformer FFN activation out = dropout(relu(x + bias)) over contiguous [rows, N] (out may be x
/// itself); `bias` [N] or undefined. Element (r, j) draws counter offset + r·N + j. x float32 or float64;
/// out in x's dtype or, for float32 x, bfloat16 (the float32 result rounded once). Throws
/// std::invalid_argument on other dtypes, shapes or devices.
void bias_relu_dropout_out(Tensor& out, const Tensor& x, const Tensor& bias, double p, uint64_t seed,
                           uint64_t offset);
/// Its backward from the saved output alone: gx = out > 0 ? gout / (1 - p) : 0 (gx may be gout itself),
/// and, when `gbias` is defined, gbias [N] = Σ_rows gx (overwritten, summed before any rounding). gout
/// float32 or float64; out and gx in its dtype or, for float32 gout, bfloat16 (gx rounded once).
void bias_relu_dropout_backward_out(Tensor& gx, Tensor& gbias, const Tensor& gout, const Tensor& out, double p);

// ---- LayerNorm family (ops_norm.cpp) ----

// LayerNormOptions (the variants as kernel flags): tensor/layer_norm_options.h.
/// Forward of the LayerNorm family over the last dim of x [..., H].
struct LayerNormResult {
  Tensor y;     ///< [..., H]: weight ⊙ (x - mu) / D + bias
  Tensor mean;  ///< [R] per row (R = numel / H), saved for the backward
  Tensor rstd;  ///< [R] 1/D per row
};
/// y = weight ⊙ (x - mu)/D + bias (Xu et al. 2019, Eq. 1) over the last dim of x; weight and bias [H] of
/// x's dtype and device, or undefined (no gain / no bias). Throws std::invalid_argument on a last dim
/// too short to normalise (H < 1, or < 2 when unbiased), a weight/bias that is not [H] or a mismatch.
LayerNormResult layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const LayerNormOptions& o);
/// Gradients of layer_norm.
struct LayerNormGrads {
  Tensor x;       ///< [..., H]
  Tensor weight;  ///< [H] when asked for, else undefined
  Tensor bias;    ///< [H] when asked for, else undefined
};
/// Closed-form backward of layer_norm (Xu et al. 2019, appendix B: W1, W2, W3) from dL/dy `gy` (x's
/// shape) and the forward's x, mean, rstd and weight (undefined: none); dweight / dbias are computed
/// only when `want_weight` / `want_bias`. `accumulate_into` (optional: contiguous, x's shape, dtype and
/// device, else ignored): a gradient of x summed so far, to which dx is added in the kernel's own pass
/// (the same bits as a separate add); the result's x is then that tensor.
LayerNormGrads layer_norm_backward(const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                   const Tensor& weight, const LayerNormOptions& o, bool want_weight,
                                   bool want_bias, const Tensor& accumulate_into = Tensor());

/// The LayerNorm family over channel groups of images x [N, C, H, W] in place of rows (LN-G-Position,
/// Ni et al. 2024): each (image, group g, pixel) normalises its n = C/G channels g·n .. g·n + n - 1 as
/// layer_norm normalises a row (the same options), then y = weight[c] ⊙ · + bias[c] per channel (weight,
/// bias [C] or undefined). The result's mean and rstd are [N, G, H, W]. Equals layer_norm on the permuted
/// rows [N·H·W·G, n] up to rounding, without the permutes. Throws std::invalid_argument unless x is a
/// floating [N, C, H, W], 1 <= groups divides C (n >= 2 when unbiased) and weight/bias are [C] like x.
LayerNormResult layer_norm_channels(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t groups,
                                    const LayerNormOptions& o);
/// Backward of layer_norm_channels, as layer_norm_backward (gradients [N, C, H, W] and [C]; the same
/// `accumulate_into` contract).
LayerNormGrads layer_norm_channels_backward(const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                            const Tensor& weight, int64_t groups, const LayerNormOptions& o,
                                            bool want_weight, bool want_bias, const Tensor& accumulate_into = Tensor());

/// BatchNorm's training forward over the channels of images x [N, C, H, W] (Ioffe & Szegedy 2015, Alg. 1).
struct BatchNormResult {
  Tensor y;     ///< [N, C, H, W]: weight[c]·(x - mean_c)·rstd_c + bias[c]
  Tensor mean;  ///< [C] batch mean per channel
  Tensor var;   ///< [C] biased batch variance per channel (the running variance takes it times n/(n - 1))
  Tensor rstd;  ///< [C] 1/sqrt(var + eps), saved for the backward
};
/// Normalises each channel of x with the mean and biased variance of its N·H·W values (summed in double),
/// in the NCHW layout; weight and bias [C] of x's dtype and device, or undefined. Throws
/// std::invalid_argument unless x is a floating [N, C, H, W] with N·H·W >= 2 and weight/bias are [C].
BatchNormResult batch_norm_channels(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps);
/// Backward of batch_norm_channels through the batch statistics (the same `accumulate_into` contract as
/// layer_norm_backward); gradients [N, C, H, W] and [C].
LayerNormGrads batch_norm_channels_backward(const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                            const Tensor& weight, bool want_weight, bool want_bias,
                                            const Tensor& accumulate_into = Tensor());

// ---- attention (ops_attention.cpp; Vaswani et al. 2017, Eq. 1; docs/attention.md) ----

/// Options of the attention row kernels.
struct AttentionRowOptions {
  double scale = 1.0;             ///< multiplies the raw scores q·k before the mask is added
  bool causal = false;            ///< block key j > i + (Tk - Tq)
  double dropout = 0.0;           ///< drop probability on the weights, in [0, 1); 0 = none
  uint64_t seed = 0, offset = 0;  ///< counter stream of the dropout mask: element (b, h, i, j) of
                                  ///< [B, H, Tq, Tk] draws counter offset + ((b·H + h)·Tq + i)·Tk + j
};
/// Whether the attention row kernels on scores' backend write a bfloat16 `dropped` beside these (float32)
/// scores (FusedKernels::attention_bf16_operands): the autocast path then skips the weights' cast.
bool attention_bf16_operands(const Tensor& scores);
/// From raw scores [B, H, Tq, Tk] (contiguous) writes the weights P = softmax over the unblocked keys of
/// scale·scores + attn_mask into `probs` (same shape; may be `scores` itself; blocked keys and fully
/// blocked rows get 0) and, when o.dropout > 0, the dropped weights P ⊙ keep / (1 - dropout) into
/// `dropped` (ignored, and may be undefined, when o.dropout == 0). Key j of batch b is blocked when
/// key_padding[b, j] != 0 ([B, Tk] in the scores' dtype, or undefined), attn_mask[i, j] == -inf ([Tq, Tk]
/// in the scores' dtype, or undefined) or (causal) j > i + Tk - Tq. Where attention_bf16_operands(scores),
/// `dropped` may be bfloat16: then it is always written, as the operand of P·V (the dropped weights, or P
/// without dropout, rounded once). Throws std::invalid_argument on a shape, dtype, device or option
/// mismatch (a bfloat16 `dropped` where the backend's kernels do not write it among them).
void attention_softmax_out(Tensor& probs, Tensor& dropped, const Tensor& scores, const Tensor& key_padding,
                           const Tensor& attn_mask, const AttentionRowOptions& o);
/// Backward of attention_softmax_out: from `gprobs` = dL/d(dropped weights) [B, H, Tq, Tk] and P writes
/// gscores = scale · P ⊙ (dP - Σ P ⊙ dP), dP = gprobs ⊙ keep / (1 - dropout) (gscores may be gprobs
/// itself) and, when o.dropout > 0, the regenerated dropped weights into `dropped` (a bfloat16 `dropped`:
/// always, as attention_softmax_out's).
void attention_softmax_backward_out(Tensor& gscores, Tensor& dropped, const Tensor& gprobs, const Tensor& probs,
                                    const AttentionRowOptions& o);
/// c[b, h] = op(a[b, h]) @ op(b[b, h]) over the [B, H] grid of heads in one backend call: c [B, H, M, N],
/// a [B, H, M, K] ([B, H, K, M] when ta), b [B, H, K, N] ([B, H, N, K] when tb). Every operand's last dim
/// is dense and its rows do not overlap (any strides otherwise, e.g. the head split of a [B, T, H·d]
/// projection); c is overwritten. bfloat16 a, b (autocast) accumulate in float32 into a float32 or
/// bfloat16 c (rounded once; Backend::gemm_mixed, one outer x batch grid); otherwise a, b, c share one
/// float dtype. Throws
/// std::invalid_argument on other shapes or layouts, or a dtype/device mismatch.
void matmul_heads_out(Tensor& c, const Tensor& a, bool ta, const Tensor& b, bool tb);

// ---- convolution and pooling helpers (ops_conv.cpp) ----

/// A kh x kw window moved by `stride` over an image zero-padded by `padding` on each side.
struct Window2d {
  int64_t kh = 1, kw = 1, stride = 1, padding = 0;
};
/// Output extents of `w` over an H x W image: (H + 2·padding - kh) / stride + 1, and for W. Throws
/// std::invalid_argument naming `op` when the window does not fit (an output under 1 x 1) or stride < 1,
/// padding < 0.
std::pair<int64_t, int64_t> window_output_hw(int64_t H, int64_t W, const Window2d& w, const char* op);
/// im2col of x [N, C, H, W] into columns [C·kh·kw, N·OH·OW] (zero padding), for conv as one GEMM.
Tensor im2col(const Tensor& x, const Window2d& w);
/// Adjoint of im2col: sums cols [C·kh·kw, N·OH·OW] back into a new [N, C, H, W] = `input` tensor.
Tensor col2im(const Tensor& cols, const Shape& input, const Window2d& w);
/// Max pooling of x [N, C, H, W]: out [N, C, OH, OW] and argmax (int64, out's shape: the flat h·W + w
/// of each window's maximum). Needs 2·padding <= kh (std::invalid_argument otherwise).
struct MaxPoolResult {
  Tensor out, argmax;
};
MaxPoolResult max_pool2d_with_indices(const Tensor& x, const Window2d& w);
/// Gradient of max pooling: gy [N, C, OH, OW] summed into a new zero [N, C, H, W] = `input` tensor at
/// the argmax positions.
Tensor max_pool2d_backward(const Tensor& gy, const Tensor& argmax, const Shape& input, const Window2d& w);

// ---- optimizer steps (ops_optim.cpp) ----

/// Hyper-parameters of one Adam/AdamW update (Kingma & Ba 2015, Alg. 1; Loshchilov & Hutter 2019).
struct AdamStepOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
  bool decoupled = false;  ///< AdamW (decay applied to the weights) instead of L2 added to the gradient
  int64_t step = 1;        ///< 1-based step for the bias correction
};
/// One Adam/AdamW step in place on contiguous param, m (first moment) and v (second moment) from grad
/// (any layout), all of one shape, float dtype and device; bumps the versions of param, m and v.
void adam_step_(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamStepOptions& o);

}  // namespace nl
