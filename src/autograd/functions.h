#pragma once
// Differentiable ops on Variables. Each records one Node (see tape.h) whose backward is defined in the
// same .cpp file as its forward (autograd/functions/*.cpp). Shapes follow PyTorch's conventions.
#include <functional>
#include <memory>
#include <vector>

#include "autograd/tape.h"
#include "autograd/variable.h"
#include "tensor/autocast.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"

namespace nl {

// ---- detach: a first-class node ----
/// Same values, no gradient to `x`. Records a Detach node so Tape::dump shows where flow is cut.
Variable detach(const Variable& x);

// ---- casts (mixed precision, docs/mixed-precision.md) ----
/// x converted to `dtype` (round to nearest even into bfloat16, exact widening), recorded as one "Cast"
/// node (Tape::dump: `Cast {float32 -> bfloat16}`) whose backward converts the gradient back to x's
/// dtype, as torch's `x.to(dtype)`. x itself when it already has that dtype (no node); to a non-float
/// dtype the result does not require grad (no gradient flows through integers). Same shape and device.
/// Throws std::invalid_argument for an undefined x. Also how a user makes an op accumulate in float64
/// (`to_dtype(x, DType::Float64)` before it, `to_dtype(y, DType::Float32)` after).
Variable to_dtype(const Variable& x, DType dtype);
/// Applies the autocast policy table (tensor/autocast.h) to input x of op `op`: under an active
/// AutocastGuard, a float32 input of a Lower op becomes bfloat16 and a bfloat16 input of a Float32 op
/// becomes float32, through a Cast node (a parameter's copy comes from the weight-cast cache,
/// tensor/cast_cache.h: one cast per update; noted "cached" on the tape); otherwise x itself.
Variable autocast(const Variable& x, AutocastOp op);

// ---- elementwise (broadcasting; backward sums gradients back to each input's shape) ----
// Same shapes, dtypes and errors as the Tensor versions in tensor/ops.h; each records one node.
Variable add(const Variable& a, const Variable& b);
Variable sub(const Variable& a, const Variable& b);
Variable mul(const Variable& a, const Variable& b);
Variable div(const Variable& a, const Variable& b);
Variable neg(const Variable& x);
/// a * x + b for scalars a, b.
Variable affine(const Variable& x, double a, double b);
Variable pow(const Variable& x, double p);
Variable exp(const Variable& x);
Variable log(const Variable& x);
Variable sqrt(const Variable& x);
Variable rsqrt(const Variable& x);
Variable tanh(const Variable& x);
Variable sigmoid(const Variable& x);
Variable relu(const Variable& x);
Variable gelu(const Variable& x);
Variable abs(const Variable& x);
Variable square(const Variable& x);
/// cond != 0 ? a : b (cond is a plain tensor; no gradient to it).
Variable where(const Tensor& cond, const Variable& a, const Variable& b);
/// `value` where mask != 0, else x (mask broadcast to x).
Variable masked_fill(const Variable& x, const Tensor& mask, double value);

Variable operator+(const Variable& a, const Variable& b);
Variable operator-(const Variable& a, const Variable& b);
Variable operator*(const Variable& a, const Variable& b);
Variable operator/(const Variable& a, const Variable& b);
Variable operator-(const Variable& x);
Variable operator+(const Variable& x, double s);
Variable operator-(const Variable& x, double s);
Variable operator*(const Variable& x, double s);
Variable operator/(const Variable& x, double s);
Variable operator*(double s, const Variable& x);
Variable operator+(double s, const Variable& x);
Variable operator-(double s, const Variable& x);

// ---- reductions ----
Variable sum(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Variable mean(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// torch.var: sum((x - mean)^2) / (N - correction); gradient flows through the mean too.
Variable var(const Variable& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
/// Max along `dim`; the gradient goes to the (first) arg-max.
Variable max(const Variable& x, int64_t dim, bool keepdim = false);

// ---- linear algebra ----
/// See nl::matmul(Tensor, Tensor) for the accepted shapes. Under autocast (tensor/autocast.h) float32
/// operands are cast to bfloat16 (Cast nodes) and the result is float32 (float32 accumulation); the
/// backward's products run on bfloat16 too and send float32 gradients.
Variable matmul(const Variable& a, const Variable& b);
/// y = x W^T + b for x [..., in], W [out, in], b [out] (b may be undefined). Under autocast x and W are
/// cast to bfloat16 (W once per update, from the weight-cast cache), b stays float32, y is float32 — or,
/// with `autocast_output`, bfloat16 (bias added in the product's epilogue; see nl::addmm): for a layer
/// whose consumers are all products that would cast y to bfloat16 anyway (attention's q, k, v
/// projections), which saves the float32 write and the cast. Without autocast the flag does nothing. The
/// backward is the same either way: float32 gradients for W and for an x that was cast here; an x that
/// arrived in bfloat16 (an attention's autocast_output) gets its gradient in bfloat16, the float32
/// accumulator rounded once.
Variable linear(const Variable& x, const Variable& w, const Variable& b, bool autocast_output = false);

// ---- shape ----
// Views as in Tensor (tensor/tensor.h); the backward maps the gradient back to the input's layout.
Variable reshape(const Variable& x, const Shape& shape);
Variable transpose(const Variable& x, int64_t d0, int64_t d1);
Variable permute(const Variable& x, const std::vector<int64_t>& dims);
Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Variable expand(const Variable& x, const Shape& shape);
Variable unsqueeze(const Variable& x, int64_t dim);
Variable squeeze(const Variable& x, int64_t dim);
Variable flatten(const Variable& x, int64_t start = 0, int64_t end = -1);
Variable contiguous(const Variable& x);
Variable cat(const std::vector<Variable>& xs, int64_t dim);
Variable stack(const std::vector<Variable>& xs, int64_t dim);
/// Entries of x along `dim` at a 1-d int64 index (repeats allowed; gradients add up).
Variable index_select(const Variable& x, int64_t dim, const Tensor& index);
/// torch.gather along `dim` (see nl::gather(Tensor...)); the gradient scatter-adds back.
Variable gather(const Variable& x, int64_t dim, const Tensor& index);
/// table[ids]: table [V, D], ids int64 of any shape -> [*ids.shape, D].
Variable embedding(const Variable& table, const Tensor& ids);

// ---- nn functional ----
Variable softmax(const Variable& x, int64_t dim = -1);
Variable log_softmax(const Variable& x, int64_t dim = -1);
/// Mean cross-entropy of logits [N, C] against int64 targets [N] over non-ignored rows, with label
/// smoothing as in torch.nn.CrossEntropyLoss: (1-eps)*nll + eps*mean_c(-log p_c) (Szegedy et al. 2016).
/// Throws on a target outside [0, C) that is not ignore_index. Returns 0 if every row is ignored.
Variable cross_entropy(const Variable& logits, const Tensor& target, double label_smoothing = 0.0,
                       int64_t ignore_index = -100);
/// Inverted dropout: zeroes each element with probability p and scales the rest by 1/(1-p) when
/// `training`; identity otherwise. The mask comes from the global counter stream (next_random_offset)
/// and is regenerated in backward, so nothing but the op is kept for backward. Throws if p is outside
/// [0, 1).
Variable dropout(const Variable& x, double p, bool training);
/// residual + dropout(x, p, training), the residual connection of a Transformer sublayer (Vaswani et al.
/// 2017, Sec. 5.4), in one pass: the same mask (the same counters of the global stream), values and
/// gradients as the two ops apart, without the dropped tensor in between. residual and x: the same shape
/// and dtype (std::invalid_argument otherwise; broadcasting: use the two ops).
Variable dropout_add(const Variable& residual, const Variable& x, double p, bool training);
/// The Transformer FFN fc2(dropout(relu(fc1(x)), p)) (Vaswani et al. 2017, Eq. 2, with fairseq's
/// activation dropout) as one op: x [..., D], w1 [F, D], b1 [F], w2 [D, F], b2 [D] (biases may be
/// undefined) -> [..., D]. It runs over blocks of `block_rows` rows (0: sized so that a [rows, F] hidden
/// block fits the L2 cache; one block off the CPU), so the hidden activations stay in cache between the
/// GEMMs and the bias + ReLU + dropout kernel, forward and backward. The same values and dropout mask as
/// the ops apart (up to the summation order of the weight gradients); the graph keeps x, the activated
/// hidden layer and the weights, as the ops apart do. Throws std::invalid_argument on mismatched shapes,
/// dtypes or devices, p outside [0, 1) or a negative block_rows. Under autocast x, w1, w2 are cast to
/// bfloat16, the products accumulate in float32, the bias + ReLU + dropout run in float32 and the graph
/// keeps the hidden layer in bfloat16 (the operand of fc2 and of its gradients); the result is float32.
Variable ffn_relu(const Variable& x, const Variable& w1, const Variable& b1, const Variable& w2, const Variable& b2,
                  double p, bool training, int64_t block_rows = 0);
/// 2-D convolution of x [N, C, H, W] with w [O, C, kh, kw] and bias b [O] (may be undefined) via
/// im2col + GEMM. Throws on channel mismatch or an output smaller than 1x1. Under autocast w is cast to
/// bfloat16 (cached), the im2col columns are rounded to bfloat16 inside the op (saved so), the product
/// accumulates in float32 and y is float32.
Variable conv2d(const Variable& x, const Variable& w, const Variable& b, int64_t stride = 1, int64_t padding = 0);
/// Max pooling over kernel x kernel windows (stride defaults to kernel) on [N, C, H, W].
Variable max_pool2d(const Variable& x, int64_t kernel, int64_t stride = 0, int64_t padding = 0);

// ---- attention ----
/// Masks and options of scaled dot-product attention (Vaswani et al. 2017, Eq. 1). Mask conventions
/// follow torch.nn.MultiheadAttention: a key is excluded where key_padding_mask != 0.
struct AttentionOptions {
  Tensor key_padding_mask;  ///< [B, Tk] (any dtype; != 0 = padding, gets no weight) or undefined
  Tensor attn_mask;         ///< [Tq, Tk] float added to the scores (-inf blocks a pair) or undefined
  bool causal = false;      ///< query i sees keys j <= i + (Tk - Tq) (the offset serves incremental decoding)
  double dropout = 0.0;     ///< dropout probability on the attention weights, applied when `training`
  bool training = false;
  double scale = 0.0;       ///< score scale; 0 means 1/sqrt(d_head)
  /// Under autocast, the result in bfloat16 (P·V rounded once) rather than float32: for a caller whose
  /// only consumer of it is a product (MultiheadAttention's out_proj). No effect without autocast.
  bool autocast_output = false;
};

/// softmax(q k^T * scale + masks) v, per batch and head: q [B, H, Tq, dh], k [B, H, Tk, dh],
/// v [B, H, Tk, dv] -> [B, H, Tq, dv]. A query whose keys are all masked gets a zero output (and zero
/// gradient) instead of NaN. The fused kernel saves q, k, v and one [B, H, Tq, Tk] tensor, the weights P
/// (measured faster than recomputing P from the row log-sum-exp; docs/attention.md); the dropout mask
/// is regenerated in backward from a (seed, offset) of the global generator, not stored.
/// Throws std::invalid_argument on rank or size mismatches (naming the shapes), q, k, v of different
/// dtypes or devices, or dropout outside [0, 1). Under autocast q, k, v are cast to bfloat16, the
/// per-head products accumulate in float32, the masked softmax (and P) stay float32, P is rounded to
/// bfloat16 as the operand of P·V; the result is float32 (bfloat16 with opts.autocast_output). The
/// gradient of an input that arrived in bfloat16 is written in bfloat16 (the float32 accumulator rounded
/// once: what its producer's products read), of one cast here in float32.
Variable attention(const Variable& q, const Variable& k, const Variable& v, const AttentionOptions& opts);
/// The composite twin of attention() from primitive ops (matmul, masked_fill, softmax, dropout): same
/// values and gradients when dropout is off; records the full weight matrix. For tests and teaching.
Variable attention_composite(const Variable& q, const Variable& k, const Variable& v, const AttentionOptions& opts);

/// Fused LayerNorm family over the last dim of x [..., H] (options: LayerNormOptions, tensor/ops_nn.h): y = weight ⊙ (x - mu)/D + bias (Xu et al. 2019,
/// Eq. 1; weight, bias [H] optional — undefined = no gain / no bias) with the closed-form backward of
/// appendix B; the parameter gradients come from the same kernel. The node saves x, mean, 1/D (and the
/// weight). Throws std::invalid_argument on a too-short last dim or a weight/bias that is not [H].
Variable layer_norm_fused(const Variable& x, const LayerNormOptions& opts, const Variable& weight = Variable(),
                          const Variable& bias = Variable());
/// The same over the channel groups of images x [N, C, H, W] (LN-G-Position, Ni et al. 2024): each
/// (image, group, pixel) normalises its C/G channels, weight/bias [C] per channel (tensor/ops_nn.h,
/// layer_norm_channels), with no permute of the image. Throws std::invalid_argument unless x is a floating
/// image, 1 <= groups divides C and weight/bias are [C].
Variable layer_norm_channels_fused(const Variable& x, int64_t groups, const LayerNormOptions& opts,
                                   const Variable& weight = Variable(), const Variable& bias = Variable());

/// BatchNorm's training step over the channels of images, as one op (Ioffe & Szegedy 2015, Alg. 1).
struct BatchNormStep {
  Variable y;   ///< [N, C, H, W]
  Tensor mean;  ///< [C] batch mean (no gradient: for the running statistics)
  Tensor var;   ///< [C] biased batch variance (likewise)
};
/// y = weight[c]·(x - mean_c)/sqrt(var_c + eps) + bias[c] with the batch statistics of each channel of x
/// [N, C, H, W] (tensor/ops_nn.h, batch_norm_channels), the gradient through them in one backward kernel,
/// no permute of the image. Throws std::invalid_argument unless x is a floating image with N·H·W >= 2 and
/// weight/bias are [C].
BatchNormStep batch_norm_channels_fused(const Variable& x, double eps, const Variable& weight = Variable(),
                                        const Variable& bias = Variable());

/// The channel between PowerNorm's backward and its module (see power_norm_fused): the backward puts
/// the new E statistic [D] in `next_E`; after the backward pass, `apply(next_E)` (set by the module;
/// empty once the module is gone, then the value is dropped) writes it into the module's buffer.
struct PowerNormEUpdate {
  Tensor next_E;                              ///< pending new E; undefined when nothing is pending
  std::function<void(const Tensor&)> apply;   ///< the module's update of its ema_gz buffer
};

/// PowerNorm's normalisation step with its approximate backward (Shen et al. 2020, Algorithm 2 /
/// Eq. 11-13; the released code's PowerFunction, seed-code §2.2-2.3), on rows x [R, D]:
///   forward:  z = x / fwd_scale   (fwd_scale [D] = sqrt(psi^2 + eps) chosen by the caller: running
///             psi_{t-1} after warmup, batch psi_B during warmup);
///   backward: g = dL/dz,  g~ = g - (1 - alpha_bwd) * E ⊙ z   (Eq. 11 with nu = (1 - alpha_bwd) E),
///             E <- E + mean over all R rows of (g~ ⊙ z)      (Eq. 13: nu(1 - (1-a)Gamma) + (1-a)Lambda),
///             dL/dx = g~ / bwd_scale   (bwd_scale [D]: batch sqrt(psi_B^2 + eps) in the code, the
///             forward's sqrt(psi_{t-1}^2 + eps) in the paper's Eq. 12).
/// No gradient reaches any statistic. `ema_gz` [D] is the module's E buffer, saved with its version
/// and only read: the backward computes the new E (dtype of ema_gz) into `update->next_E` and queues a
/// post-backward callback (autograd/post_backward.h) that hands it to `update->apply` once the whole
/// pass has finished; the module's apply writes it into its buffer (in place, bumping the version), so
/// E changes once per backward pass at a well-defined point, never while the graph is walked. A second
/// node of the same module reaching its backward while an E is pending (two forwards of one module
/// before their backward) throws std::runtime_error instead of silently reading the stale E; a
/// retain_graph second pass throws the saved-tensor version error. Throws std::invalid_argument on
/// shapes other than [R, D] and [D], or a null `update`.
Variable power_norm_fused(const Variable& x, const Tensor& fwd_scale, const Tensor& bwd_scale, const Tensor& ema_gz,
                          double alpha_bwd, std::shared_ptr<PowerNormEUpdate> update);

}  // namespace nl
