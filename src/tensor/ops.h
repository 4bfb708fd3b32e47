#pragma once
// Tensor compute ops (no autograd). Each dispatches to the backend of its inputs' device. Binary ops
// broadcast per NumPy/PyTorch rules; mixing dtypes or devices is an error naming both. Results are new
// contiguous tensors. Differentiable versions of these live in autograd/functions.h.
#include <vector>

#include "tensor/tensor.h"

namespace nl {

// ---- elementwise binary (broadcasting) ----
// Each returns a new contiguous tensor of the broadcast shape; throws std::invalid_argument if the
// shapes cannot be broadcast (naming both) or the dtypes/devices differ. int64 div throws
// std::invalid_argument on a zero divisor (integer division by zero has no value).
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
/// Comparisons return 1/0 in the inputs' dtype.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
/// ReLU backward: g where y > 0, else 0 (y = ReLU output).
Tensor relu_grad(const Tensor& g, const Tensor& y);
/// Backend-level binary op with an explicit output (out must have the broadcast shape).
void binary_into(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b);

// ---- elementwise unary ----
// Each returns a new contiguous tensor of x's shape and dtype. Math ops (exp, log, sqrt, rsqrt, tanh,
// sigmoid, gelu, gelu_grad, reciprocal, pow) need float dtypes and throw std::invalid_argument on int64.
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
/// GELU with the exact erf form (PyTorch's default), and its derivative.
Tensor gelu(const Tensor& x);
Tensor gelu_grad(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor pow(const Tensor& x, double p);
/// a * x + b.
Tensor affine(const Tensor& x, double a, double b);
Tensor clamp_min(const Tensor& x, double lo);
Tensor clamp_max(const Tensor& x, double hi);
/// 1 where x > v else 0.
Tensor gt(const Tensor& x, double v);
/// cond != 0 ? a : b (broadcasting; a and b same dtype).
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
/// x with `value` where mask != 0 (mask broadcast to x).
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
/// Any unary op with its scalar parameters a, b (see UnaryOp); throws std::invalid_argument for an
/// undefined x, or an int64 x with an op that needs floats (unary_supports_int).
Tensor unary(UnaryOp op, const Tensor& x, double a = 0, double b = 0);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double s);
Tensor operator-(const Tensor& a, double s);
Tensor operator*(const Tensor& a, double s);
Tensor operator/(const Tensor& a, double s);
Tensor operator*(double s, const Tensor& a);
Tensor operator+(double s, const Tensor& a);

// ---- reductions ----
/// Sum over `dims` (empty = all dims); keepdim keeps them as size 1.
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Variance over `dims` with `correction` (0: biased 1/N, 1: unbiased 1/(N-1)), as torch.var.
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& x, int64_t dim, bool keepdim = false);
/// int64 indices of the maximum along `dim` (first occurrence).
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
/// Sums a broadcast result back to `shape` (the adjoint of expand).
Tensor sum_to(const Tensor& x, const Shape& shape);
/// Σ over the rows of a matrix [R, C] -> [C] (a bias gradient): sum(m, {0}) for float32/float64; for
/// bfloat16 m a float32 result, the terms widened exactly and summed in float32 blocks of 16 rows added to
/// double on the CPU (one read of m, no float32 copy of a row-major m; Backend::reduce). Throws std::invalid_argument unless m is 2-d.
Tensor sum_rows(const Tensor& m);
Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim);

// ---- linear algebra ----
/// Matrix product: [M,K]@[K,N], or batched [...,M,K]@[...,K,N] with broadcast batch dims, or
/// [...,M,K]@[K,N]. 1-d operands are not supported (unsqueeze first). Float dtypes only; bfloat16
/// operands accumulate in float32 and give a float32 result (the mixed-precision products,
/// docs/mixed-precision.md). Throws std::invalid_argument if M, N, K (or the folded rows) exceed
/// 2^31 - 1, the limit of BLAS's int arguments, before any copy or BLAS call; std::runtime_error for
/// bfloat16 operands on a backend without bfloat16 products (a CPU build without oneDNN).
Tensor matmul(const Tensor& a, const Tensor& b);
/// matmul with the result in `out_dtype`: the operands' dtype, or float32 / bfloat16 for bfloat16
/// operands (float32 accumulation, rounded once at the end). Throws std::invalid_argument for another
/// combination, and as matmul.
Tensor matmul(const Tensor& a, const Tensor& b, DType out_dtype);
/// torch.addmm(bias, a, b) with beta = alpha = 1: out [M, N] = a [M, K] @ b [K, N] + bias [N] (bias broadcast
/// over rows). The bias is written into the output first and the product accumulated onto it (one GEMM with
/// beta = 1), a memory pass fewer than matmul then add. bfloat16 a, b take a float32 bias and give a
/// float32 result, the bias added in the product's epilogue. Throws std::invalid_argument on non-2-d operands, mismatched inner dims, a bias that is
/// not [N], or a dtype/device mismatch.
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b);
/// addmm with the result in `out_dtype`: bias's dtype as above, or bfloat16 for bfloat16 a, b and a float32
/// bias (added in the product's epilogue: what a product feeding only other products writes under
/// autocast). The CPU rounds the float32 sum once; the CUDA backend rounds cuBLAS's product to bfloat16 and
/// then adds the bias in its epilogue kernel, a second rounding (within one bfloat16 step of the CPU). Throws std::invalid_argument for another combination, and as addmm.
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, DType out_dtype);
/// addmm into `out` (contiguous [M, N], dtype as addmm's out_dtype). For float32/float64 operands the bias
/// is copied into out and the product accumulated onto it; for bfloat16 operands the float32 bias is added
/// in the product's epilogue, for a float32 result as for a bfloat16 one (no bias pass and no read of out).
/// Throws as addmm, and std::invalid_argument for an output of another shape or not contiguous.
void addmm_out(Tensor& out, const Tensor& bias, const Tensor& a, const Tensor& b);
/// max(0, a @ b + bias) into `out` in one product call (the ReLU right after it, on the result): bfloat16 a
/// [M, K], b [K, N], float32 bias [N], out [M, N] float32 or bfloat16 (the sum rounded once; ReLU commutes
/// with that rounding; a NaN stays NaN). The Transformer FFN's first layer under autocast when it has no
/// activation dropout. Throws std::invalid_argument for other dtypes (use addmm_out and
/// bias_relu_dropout_out) and as addmm_out.
void addmm_relu_out(Tensor& out, const Tensor& bias, const Tensor& a, const Tensor& b);
/// out = a [M, K] @ b [K, N] + beta * out, written into an existing contiguous out [M, N] (a row block
/// of a larger matrix, for instance); beta = 0 ignores out's old values. bfloat16 a, b write a float32 or
/// bfloat16 out (float32 accumulation). Throws std::invalid_argument on non-2-d operands, mismatched dims,
/// a non-contiguous out, or a dtype/device mismatch.
void matmul_out(Tensor& out, const Tensor& a, const Tensor& b, double beta = 0.0);

// ---- shape and indexing ----
Tensor cat(const std::vector<Tensor>& xs, int64_t dim);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim);
/// Rows of `x` (along dim) at int64 `index` (1-d).
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
/// torch.gather: out[..., i, ...] = x[..., index[..., i, ...], ...] along `dim`; index is int64 with
/// x's number of dims and x's extents except along `dim`. Throws on other shapes or out-of-range ids.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
/// table[ids] for table [V, D] and int64 ids of any shape: result [*ids.shape, D].
Tensor embedding(const Tensor& table, const Tensor& ids);
/// table[index[i], :] += src[i, :] in place, for contiguous table [V, D], int64 index [n] and src [n, D]
/// (the adjoint of index_select / embedding); throws std::invalid_argument on other shapes or a
/// dtype/device mismatch, std::out_of_range on an index outside [0, V).
void index_add_rows_(Tensor& table, const Tensor& index, const Tensor& src);
/// dst[r, index[r, k]] += src[r, k] in place, for contiguous dst [R, C], int64 index [R, K] and src [R, K]
/// (the adjoint of gather along the last dim); throws as index_add_rows_.
void scatter_add_rows_(Tensor& dst, const Tensor& index, const Tensor& src);

// ---- nn (the other fused ops, softmax_backward among them: tensor/ops_nn.h) ----
/// exp(x) / sum(exp(x)) along `dim`, shifted by the max for stability. Float dtypes only. As in
/// PyTorch, a tensor with no elements (e.g. [B, 0]) gives an empty result of the same shape.
Tensor softmax(const Tensor& x, int64_t dim = -1);
/// x - logsumexp(x) along `dim`; float dtypes only; empty input gives an empty result (as softmax).
Tensor log_softmax(const Tensor& x, int64_t dim = -1);

/// Throws std::invalid_argument naming `op` if a and b differ in dtype or device.
void check_same(const Tensor& a, const Tensor& b, const char* op);
/// Throws std::invalid_argument naming `op`, both devices and the fix when a and b live on different
/// devices (a kernel must never receive a pointer of another device).
void check_same_device(const Tensor& a, const Tensor& b, const char* op);
/// Throws std::invalid_argument naming `op` if x is undefined or not float32/float64
/// ("exp: expects a float tensor, got int64; convert with .to(DType::Float32)"; for bfloat16
/// no_bf16_error). Ops call it before any kernel runs, so no error is raised inside a parallel region.
void check_floating(const Tensor& x, const char* op);

/// Waits until every kernel queued on device `d` has finished (a no-op on the CPU) and reports an
/// asynchronous kernel error found since the last synchronisation (std::out_of_range naming the kernel).
/// For timing and for the few points where a program reads results; a training step never calls it.
void synchronize(Device d);

}  // namespace nl
