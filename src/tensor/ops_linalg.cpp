#include <algorithm>
#include <climits>
#include <stdexcept>

#include "tensor/autocast.h"
#include "tensor/ops.h"

namespace nl {

namespace {
// A matrix operand as BLAS sees it: data, whether to transpose, leading dim, and batch stride.
struct GemmOperand {
  Tensor t;
  bool trans = false;
  int64_t ld = 0, batch_stride = 0;
};

// Rows/cols are the last two dims; batch dims (if any) must be already flattened to one.
GemmOperand as_operand(const Tensor& x) {
  const int nd = x.dim();
  const int64_t r = x.size(-2), c = x.size(-1);
  auto fits = [&](const Tensor& t, bool& trans, int64_t& ld) {
    const auto& st = t.strides();
    if ((st[nd - 1] == 1 || c == 1) && st[nd - 2] >= std::max<int64_t>(c, 1)) {
      trans = false;
      ld = st[nd - 2] ? st[nd - 2] : c;
      return true;
    }
    if ((st[nd - 2] == 1 || r == 1) && st[nd - 1] >= std::max<int64_t>(r, 1)) {
      trans = true;
      ld = st[nd - 1] ? st[nd - 1] : r;
      return true;
    }
    return false;
  };
  GemmOperand op;
  op.t = x;
  if (!fits(x, op.trans, op.ld) || (nd == 3 && x.size(0) > 1 && x.strides()[0] == 0)) {
    op.t = x.contiguous();
    op.trans = false;
    op.ld = c;
  }
  op.batch_stride = nd == 3 ? op.t.strides()[0] : 0;
  return op;
}

void* raw(const Tensor& t) { return t.desc().data; }


// cblas_(s/d)gemm take int extents: refuse larger products before copying or calling BLAS.
void check_blas_extent(const char* what, int64_t v, const Tensor& a, const Tensor& b) {
  if (v > INT_MAX)
    throw std::invalid_argument(std::string("matmul: ") + what + " = " + std::to_string(v) + " of " +
                                shape_str(a.shape()) + " @ " + shape_str(b.shape()) +
                                " exceeds 2^31 - 1, the limit of BLAS's int arguments; split the product into "
                                "smaller blocks");
}
// Operands of one dtype and device: float32, float64, or bfloat16 (whose products accumulate in float32).
void check_product_operands(const Tensor& a, const Tensor& b, const char* op) {
  check_same(a, b, op);
  if (a.dtype() != DType::BFloat16) check_floating(a, op);
}
// The result dtype `out` must suit the operands: their own dtype, or float32 / bfloat16 for bfloat16 ones.
void check_product_result(DType operands, DType out, const char* op) {
  const bool ok = out == operands || (operands == DType::BFloat16 && out == DType::Float32);
  if (!ok)
    throw std::invalid_argument(std::string(op) + ": " + dtype_name(operands) + " operands cannot give a " +
                                dtype_name(out) + " result (" +
                                (operands == DType::BFloat16 ? "float32 or bfloat16" : dtype_name(operands)) + ")");
}

// C[b] = op(A[b]) @ op(B[b]) + beta * C[b] for b < batch on the operands' backend: gemm() for float32 /
// float64, gemm_mixed() (float32 accumulation, C in c_dtype) for bfloat16 operands.
// `bias` (float32 [N], mixed products only) is added to every row in the product's epilogue.
void run_gemm(const Tensor& like, DType c_dtype, const GemmOperand& A, const GemmOperand& B, int64_t M, int64_t N,
              int64_t K, double beta, void* C, int64_t ldc, int64_t sC, int64_t batch, const float* bias = nullptr,
              bool relu = false) {
  autocast_observe(AutocastOp::Gemm, like.dtype());
  Backend& be = backend_for(like.device().type);
  if (like.dtype() != DType::BFloat16) {
    be.gemm(like.dtype(), A.trans, B.trans, M, N, K, 1.0, raw(A.t), A.ld, A.batch_stride, raw(B.t), B.ld,
            B.batch_stride, beta, C, ldc, sC, batch, like.device().index);
    return;
  }
  MixedGemm g;
  g.ab = DType::BFloat16;
  g.c = c_dtype;
  g.M = M, g.N = N, g.K = K, g.batch = batch, g.beta = beta;
  g.A = {raw(A.t), A.ld, A.batch_stride, 0, A.trans};
  g.B = {raw(B.t), B.ld, B.batch_stride, 0, B.trans};
  g.C = C, g.ldc = ldc, g.strideC = sC;
  g.bias = bias;
  g.relu = relu;
  g.device_index = like.device().index;
  be.gemm_mixed(g);
}

// out [M, N] = a [M, K] @ b [K, N] + beta * out (BLAS's strides where they fit, else a contiguous copy);
// `bias` and `relu` as run_gemm (mixed products only).
void gemm_2d(const Tensor& a, const Tensor& b, Tensor& out, double beta, const float* bias = nullptr,
             bool relu = false) {
  GemmOperand A = as_operand(a), B = as_operand(b);
  A.batch_stride = B.batch_stride = 0;
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (M && N) run_gemm(a, out.dtype(), A, B, M, N, K, beta, raw(out), N, 0, 1, bias, relu);
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  return matmul(a, b, a.defined() && a.dtype() == DType::BFloat16 ? DType::Float32 : a.dtype());
}

Tensor matmul(const Tensor& a, const Tensor& b, DType out_dtype) {
  check_product_operands(a, b, "matmul");
  check_product_result(a.dtype(), out_dtype, "matmul");
  if (a.dim() < 2 || b.dim() < 2)
    throw std::invalid_argument("matmul: needs operands of at least 2 dims, got " + shape_str(a.shape()) + " and " +
                                shape_str(b.shape()) + " (unsqueeze vectors first)");
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  if (b.size(-2) != K)
    throw std::invalid_argument("matmul: inner dims differ: " + shape_str(a.shape()) + " @ " + shape_str(b.shape()));
  // With a 2-d b the batch dims of a are folded into the rows of one product.
  check_blas_extent("M", b.dim() == 2 ? shape_numel(Shape(a.shape().begin(), a.shape().end() - 1)) : M, a, b);
  check_blas_extent("N", N, a, b);
  check_blas_extent("K", K, a, b);
  if (b.dim() == 2) {
    // [..., M, K] @ [K, N]: fold the batch into rows when a's rows are evenly strided.
    Shape lead(a.shape().begin(), a.shape().end() - 2);
    Tensor a2 = a.dim() == 2 ? a : a.reshape({-1, K});
    Tensor out = Tensor::empty({a2.size(0), N}, out_dtype, a.device());
    gemm_2d(a2, b, out, 0.0);
    lead.push_back(M);
    lead.push_back(N);
    return out.view(lead);
  }
  // Batched with broadcast batch dims.
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, "matmul (batch dims)");
  const int64_t nb = shape_numel(batch);
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {M, K});
  eb.insert(eb.end(), {K, N});
  Tensor a3 = a.expand(ea).reshape({nb, M, K}), b3 = b.expand(eb).reshape({nb, K, N});
  GemmOperand A = as_operand(a3), B = as_operand(b3);
  Tensor out = Tensor::empty({nb, M, N}, out_dtype, a.device());
  if (nb && M && N) run_gemm(a, out_dtype, A, B, M, N, K, 0.0, raw(out), N, M * N, nb);
  Shape os = batch;
  os.insert(os.end(), {M, N});
  return out.view(os);
}

void matmul_out(Tensor& out, const Tensor& a, const Tensor& b, double beta) {
  if (a.dim() != 2 || b.dim() != 2 || out.dim() != 2)
    throw std::invalid_argument("matmul_out: needs 2-d operands, got " + shape_str(a.shape()) + " @ " +
                                shape_str(b.shape()) + " into " + shape_str(out.shape()));
  check_product_operands(a, b, "matmul_out");
  check_same_device(a, out, "matmul_out");
  check_product_result(a.dtype(), out.dtype(), "matmul_out");
  if (a.size(1) != b.size(0))
    throw std::invalid_argument("matmul_out: inner dims differ: " + shape_str(a.shape()) + " @ " + shape_str(b.shape()));
  if (out.size(0) != a.size(0) || out.size(1) != b.size(1) || !out.is_contiguous())
    throw std::invalid_argument("matmul_out: the output must be contiguous [" + std::to_string(a.size(0)) + ", " +
                                std::to_string(b.size(1)) + "], got " + shape_str(out.shape()));
  check_blas_extent("M", a.size(0), a, b);
  check_blas_extent("N", b.size(1), a, b);
  check_blas_extent("K", a.size(1), a, b);
  gemm_2d(a, b, out, beta);
  out.bump_version();
}

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b) { return addmm(bias, a, b, bias.dtype()); }

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, DType out_dtype) {
  if (a.dim() != 2 || b.dim() != 2)
    throw std::invalid_argument("addmm: needs 2-d operands, got " + shape_str(a.shape()) + " and " +
                                shape_str(b.shape()));
  Tensor out = Tensor::empty({a.size(0), b.size(1)}, out_dtype, a.device());
  addmm_out(out, bias, a, b);
  return out;
}

namespace {
// addmm_out, and with `relu` addmm_relu_out (bfloat16 operands only).
void addmm_into(Tensor& out, const Tensor& bias, const Tensor& a, const Tensor& b, bool relu) {
  if (a.dim() != 2 || b.dim() != 2)
    throw std::invalid_argument("addmm: needs 2-d operands, got " + shape_str(a.shape()) + " and " +
                                shape_str(b.shape()));
  if (a.size(1) != b.size(0))
    throw std::invalid_argument("addmm: inner dims differ: " + shape_str(a.shape()) + " @ " + shape_str(b.shape()));
  const int64_t N = b.size(1);
  if (bias.shape() != Shape{N})
    throw std::invalid_argument("addmm: bias " + shape_str(bias.shape()) + " should be [" + std::to_string(N) +
                                "] for " + shape_str(a.shape()) + " @ " + shape_str(b.shape()));
  const DType out_dtype = out.dtype();
  // The bias has the operands' dtype, or float32 for bfloat16 operands; so has the result, unless
  // bfloat16 operands ask for a bfloat16 one.
  check_same_device(a, bias, "addmm");
  check_product_result(a.dtype(), bias.dtype(), "addmm");
  check_product_result(a.dtype(), out_dtype, "addmm");
  if (out.size(0) != a.size(0) || out.size(1) != N || !out.is_contiguous())
    throw std::invalid_argument("addmm: the output must be contiguous [" + std::to_string(a.size(0)) + ", " +
                                std::to_string(N) + "], got " + shape_str(out.shape()));
  if (relu && a.dtype() != DType::BFloat16)
    throw std::invalid_argument("addmm_relu: needs bfloat16 operands (autocast), got " + dtype_name(a.dtype()) +
                                "; use addmm_out and bias_relu_dropout_out");
  if (a.dtype() != DType::BFloat16) {  // BLAS: the bias written first, the product accumulated onto it (beta = 1)
    out.copy_(bias.view({1, N}));
    matmul_out(out, a, b, 1.0);
    return;
  }
  // bfloat16 operands: the float32 bias added in the product's epilogue (no bias pass, no read of the
  // output), the sum rounded once to a bfloat16 result.
  if (bias.dtype() != DType::Float32)
    throw std::invalid_argument("addmm: " + dtype_name(a.dtype()) + " operands with a " + dtype_name(out_dtype) +
                                " result need a float32 bias, got " + dtype_name(bias.dtype()) +
                                " (or ask for the bias's dtype as the result)");
  check_product_operands(a, b, "addmm");
  check_blas_extent("M", a.size(0), a, b);
  check_blas_extent("N", N, a, b);
  check_blas_extent("K", a.size(1), a, b);
  const Tensor bc = bias.contiguous();
  gemm_2d(a, b, out, 0.0, static_cast<const float*>(raw(bc)), relu);
  out.bump_version();
}
}  // namespace

void addmm_out(Tensor& out, const Tensor& bias, const Tensor& a, const Tensor& b) {
  addmm_into(out, bias, a, b, false);
}

void addmm_relu_out(Tensor& out, const Tensor& bias, const Tensor& a, const Tensor& b) {
  addmm_into(out, bias, a, b, true);
}

}  // namespace nl
