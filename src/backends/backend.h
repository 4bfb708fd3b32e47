#pragma once
// The Backend interface: memory and compute kernels for one device type. src/tensor dispatches every
// op to the backend of its tensors' device; backends know nothing of autograd or layers. A backend
// receives strided views (`Desc`) whose operands were already broadcast to the output shape by the
// front end (stride 0 on broadcast dims). Outputs are always contiguous unless stated otherwise.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tensor/device.h"
#include "tensor/dtype.h"

namespace nl {

constexpr int kMaxDims = 8;

/// A strided view handed to kernels: data points at the first element; shape/strides in elements.
struct Desc {
  void* data = nullptr;
  DType dtype = DType::Float32;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
  bool contiguous() const {
    int64_t acc = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      if (shape[i] != 1 && strides[i] != acc) return false;
      acc *= shape[i];
    }
    return true;
  }
};

/// Elementwise unary ops; `a`, `b` are the op's scalar parameters where noted.
enum class UnaryOp {
  Neg, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Relu, Gelu, GeluGrad, Abs, Square, Reciprocal, Sign,
  PowScalar,  ///< x^a
  Affine,     ///< a*x + b
  ClampMin,   ///< max(x, a)
  ClampMax,   ///< min(x, a)
  GtScalar,   ///< x > a ? 1 : 0
};
/// True if unary `op` is defined for int64 tensors (neg, abs, square, sign, relu, affine, clamps, gt);
/// the math ops (exp, log, sqrt, ...) need float tensors.
constexpr bool unary_supports_int(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: case UnaryOp::Abs: case UnaryOp::Square: case UnaryOp::Sign: case UnaryOp::Relu:
    case UnaryOp::Affine: case UnaryOp::ClampMin: case UnaryOp::ClampMax: case UnaryOp::GtScalar:
      return true;
    case UnaryOp::Exp: case UnaryOp::Log: case UnaryOp::Sqrt: case UnaryOp::Rsqrt: case UnaryOp::Tanh:
    case UnaryOp::Sigmoid: case UnaryOp::Gelu: case UnaryOp::GeluGrad: case UnaryOp::Reciprocal:
    case UnaryOp::PowScalar:
      return false;
  }
  return false;
}
/// Elementwise binary ops (comparisons return 1/0 in the operands' dtype).
/// ReluGrad: out = y > 0 ? x : 0 (the ReLU backward, x = upstream gradient, y = ReLU output).
enum class BinaryOp { Add, Sub, Mul, Div, Pow, Maximum, Minimum, Eq, Ne, Gt, Ge, Lt, Le, ReluGrad };
/// Reductions over the trailing dims of the input view.
enum class ReduceOp { Sum, Mean, Max, Min, ArgMax };

/// Parameters of a 2-D convolution / pooling window over NCHW images.
struct Conv2dGeom {
  int64_t N, C, H, W;      ///< input
  int64_t kh, kw;          ///< window
  int64_t sh, sw, ph, pw;  ///< stride, zero padding
  int64_t OH() const { return (H + 2 * ph - kh) / sh + 1; }
  int64_t OW() const { return (W + 2 * pw - kw) / sw + 1; }
};

/// Options of the fused LayerNorm-family kernel (Xu et al. 2019, Eq. 1 and Theorem 1).
struct NormKernelOpts {
  double eps = 1e-5;
  bool unbiased = false;    ///< std with 1/(H-1) (AdaNorm code) instead of 1/H (paper, torch LN)
  bool eps_inside = true;   ///< sqrt(var + eps) (torch) vs sqrt(var) + eps (AdaNorm code)
  bool center = true;       ///< subtract the mean (false: RMS-style scaling)
  bool detach_mean = false; ///< no gradient through the mean
  bool detach_std = false;  ///< no gradient through the std
};

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

/// Memory and kernels of one device type. All methods throw std::runtime_error on failure (and
/// std::invalid_argument / std::out_of_range on bad input, as documented per method). Every check
/// runs before a kernel's parallel loop: an exception must never leave an OpenMP region, where it
/// would call std::terminate.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceType type() const = 0;
  virtual std::string name() const = 0;

  // ---- memory ----
  virtual void* allocate(size_t nbytes, int device_index) = 0;
  virtual void deallocate(void* p, size_t nbytes, int device_index) = 0;
  /// Bytes held by the caching allocator (in use + cached) — for diagnostics.
  virtual size_t bytes_cached() const { return 0; }
  virtual void copy_to_host(void* dst, const void* src, size_t nbytes) = 0;
  virtual void copy_from_host(void* dst, const void* src, size_t nbytes) = 0;
  virtual void synchronize() {}

  // ---- elementwise ----
  virtual void fill(const Desc& out, double value) = 0;
  /// out = in (any strides, dtype conversion allowed; shapes equal).
  virtual void copy(const Desc& out, const Desc& in) = 0;
  /// out = op(in) elementwise; throws std::invalid_argument for an int64 tensor and an op for which
  /// unary_supports_int(op) is false.
  virtual void unary(UnaryOp op, const Desc& out, const Desc& in, double a, double b) = 0;
  virtual void binary(BinaryOp op, const Desc& out, const Desc& x, const Desc& y) = 0;
  /// out = cond != 0 ? x : y.
  virtual void where(const Desc& out, const Desc& cond, const Desc& x, const Desc& y) = 0;
  /// Counter-based uniform [lo, hi) or normal(mean=lo, std=hi) fill, reproducible for (seed, offset).
  virtual void random(const Desc& out, bool normal, double lo, double hi, uint64_t seed, uint64_t offset) = 0;
  /// Inverted dropout with a regenerated mask: out[i] = in[i] / (1 - p) where uniform01(seed, offset + i)
  /// > p (the counter stream of `random`), else 0. The same call with the gradient as `in` is the
  /// backward, so no mask is stored. Contiguous in/out of one float dtype (may alias); 0 <= p < 1.
  virtual void dropout(const Desc& out, const Desc& in, double p, uint64_t seed, uint64_t offset) = 0;

  // ---- reductions ----
  /// Reduces `in` over its trailing `nreduce` dims into contiguous `out` (numel = product of leading dims).
  virtual void reduce(ReduceOp op, const Desc& out, const Desc& in, int nreduce) = 0;

  // ---- linear algebra (column-major BLAS convention is NOT used: all row-major) ----
  /// C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b] for b < batch; row-major with leading dims.
  /// Float dtypes only. Throws std::invalid_argument for int64, or if M, N, K or a leading dim exceeds
  /// 2^31 - 1 (BLAS takes int), before any BLAS call.
  virtual void gemm(DType t, bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha,
                    const void* A, int64_t lda, int64_t strideA, const void* B, int64_t ldb, int64_t strideB,
                    double beta, void* C, int64_t ldc, int64_t strideC, int64_t batch) = 0;

  // ---- nn kernels ----
  /// Row softmax / log-softmax over the last dim of contiguous [rows, cols]; no-op when empty.
  virtual void softmax(const Desc& out, const Desc& in, bool log) = 0;
  /// Gradient of softmax (log=false) or log-softmax (log=true) given its output y and dL/dy.
  virtual void softmax_backward(const Desc& gin, const Desc& gout, const Desc& y, bool log) = 0;
  /// im2col of contiguous NCHW input into cols [C*kh*kw, N*OH*OW].
  virtual void im2col(const Desc& cols, const Desc& in, const Conv2dGeom& g) = 0;
  /// Adjoint of im2col: accumulates cols [C*kh*kw, N*OH*OW] into zeroed gin (NCHW).
  virtual void col2im(const Desc& gin, const Desc& cols, const Conv2dGeom& g) = 0;
  /// Max pooling; `idx` (int64, same shape as out) holds the flat h*W+w argmax per window.
  virtual void maxpool2d(const Desc& out, const Desc& idx, const Desc& in, const Conv2dGeom& g) = 0;
  virtual void maxpool2d_backward(const Desc& gin, const Desc& gout, const Desc& idx, const Conv2dGeom& g) = 0;
  /// out[i, :] = table[idx[i], :] for contiguous table [V, D]; throws on an id out of [0, V).
  virtual void index_select_rows(const Desc& out, const Desc& table, const Desc& idx) = 0;
  /// table[idx[i], :] += src[i, :] (embedding backward).
  virtual void index_add_rows(const Desc& table, const Desc& idx, const Desc& src) = 0;
  /// out[r, k] = in[r, idx[r, k]] for contiguous in [R, C] and int64 idx [R, K]; throws on an index
  /// outside [0, C).
  virtual void gather_rows(const Desc& out, const Desc& in, const Desc& idx) = 0;
  /// gin[r, idx[r, k]] += g[r, k]: the adjoint of gather_rows.
  virtual void scatter_add_rows(const Desc& gin, const Desc& idx, const Desc& g) = 0;
  /// Fused cross-entropy over contiguous logits [N, C], targets int64 [N]: loss[i] (0 when target ==
  /// ignore_index) and the softmax probabilities saved for backward (Szegedy et al. 2016 smoothing).
  virtual void cross_entropy(const Desc& loss, const Desc& prob, const Desc& logits, const Desc& target,
                             int64_t ignore_index, double label_smoothing) = 0;
  /// dlogits[i] = scale_i * (prob[i] - q_i) with q the smoothed one-hot target.
  virtual void cross_entropy_backward(const Desc& glogits, const Desc& gloss, const Desc& prob,
                                      const Desc& target, int64_t ignore_index, double label_smoothing) = 0;
  /// Fused LayerNorm family forward over the last dim of contiguous [rows, H]: y = g ⊙ (x - mu)/D + b
  /// (Xu et al. 2019, Eq. 1), mean[rows], rstd[rows] (rstd = 1/D). `weight` g and `bias` b are contiguous
  /// [H] or a Desc with data == nullptr (absent: g = 1, b = 0).
  virtual void layer_norm(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x, const Desc& weight,
                          const Desc& bias, const NormKernelOpts& o) = 0;
  /// Closed-form backward of layer_norm (Xu et al. 2019, appendix B, W1/W2/W3) applied to g ⊙ gy: gx [rows, H];
  /// with a weight, gweight[H] = Σ_rows gy ⊙ (x - mu)/D; gbias[H] = Σ_rows gy. gweight / gbias may be absent
  /// (data == nullptr) and are overwritten, not accumulated.
  virtual void layer_norm_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                   const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                   const NormKernelOpts& o) = 0;
  /// Attention forward row kernel, per row of `scores` (contiguous [batch*heads*tq, tk], the raw q k^T):
  /// x_j = scale * scores_j + attn_mask[i, j]; writes P = softmax over the unblocked keys into `probs`
  /// (blocked keys: 0; a row with every key blocked: all 0; may alias `scores`) and the dropped weights
  /// P_j * keep_j / (1 - dropout) into `dropped` (same shape; ignored when o.dropout == 0, where they are
  /// P). `key_padding` is [batch, tk] and `attn_mask` [tq, tk], contiguous, in the scores' dtype, or a
  /// Desc with data == nullptr when absent. Float dtypes only; throws std::invalid_argument on a dtype,
  /// shape or option mismatch (before any work).
  virtual void attention_softmax(const Desc& probs, const Desc& dropped, const Desc& scores,
                                 const Desc& key_padding, const Desc& attn_mask, const AttentionKernelOpts& o) = 0;
  /// Attention backward row kernel: from the weights `probs` = P of attention_softmax and `gprobs` =
  /// dL/d(dropped weights) = dO V^T (same [rows, tk] layout), regenerates the dropout mask and writes
  ///   gscores_j = scale * P_j * (dP_j - sum_k P_k dP_k),  dP_j = gprobs_j * keep_j / (1 - dropout)
  /// (the gradient w.r.t. the raw scores; 0 where P is 0, i.e. on blocked keys) and, when o.dropout > 0,
  /// the dropped weights into `dropped` (for dV = dropped^T dO; ignored when o.dropout == 0).
  /// `gscores` may alias `gprobs`. Same checks as attention_softmax.
  virtual void attention_softmax_backward(const Desc& gscores, const Desc& dropped, const Desc& gprobs,
                                          const Desc& probs, const AttentionKernelOpts& o) = 0;
  /// One Adam/AdamW step in place on contiguous param, grad, m, v (same dtype and size).
  virtual void adam_step(const Desc& param, const Desc& grad, const Desc& m, const Desc& v,
                         const AdamKernelOpts& o) = 0;
};

/// The backend for a device type; throws std::runtime_error when that backend is not built
/// (e.g. "CUDA backend not available: rebuild with nvcc on PATH").
Backend& backend_for(DeviceType t);
/// Installs a backend (called at start-up by each backend's translation unit).
void register_backend(DeviceType t, Backend* b);
/// True when a backend for `t` was built and a device is present (always true for CPU).
bool backend_available(DeviceType t);

}  // namespace nl
