#include "backends/backend.h"

#include <stdexcept>
#include <string>

#include "backends/composite/composite_kernels.h"

namespace nl {

Backend::Backend() : composite_(std::make_unique<CompositeKernels>(*this)) {}
Backend::~Backend() = default;

void Backend::gemm_grid(DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                        int64_t lda, int64_t sA, int64_t oA, const void* B, int64_t ldb, int64_t sB, int64_t oB,
                        double beta, void* C, int64_t ldc, int64_t sC, int64_t oC, int64_t batch, int64_t outer,
                        int device_index) {
  const int64_t es = (int64_t)dtype_size(t);
  for (int64_t o = 0; o < outer; ++o)
    gemm(t, ta, tb, M, N, K, alpha, static_cast<const char*>(A) + o * oA * es, lda, sA,
         static_cast<const char*>(B) + o * oB * es, ldb, sB, beta, static_cast<char*>(C) + o * oC * es, ldc, sC, batch,
         device_index);
}

void Backend::gemm_mixed(const MixedGemm&) {
  throw std::runtime_error("bfloat16 products are not available on " + name() +
                           "; run the product in float32 (.to(DType::Float32))");
}

const char* unary_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Rsqrt: return "rsqrt";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Relu: return "relu";
    case UnaryOp::Gelu: return "gelu";
    case UnaryOp::GeluGrad: return "gelu_grad";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Square: return "square";
    case UnaryOp::Reciprocal: return "reciprocal";
    case UnaryOp::Sign: return "sign";
    case UnaryOp::PowScalar: return "pow";
    case UnaryOp::Affine: return "affine";
    case UnaryOp::ClampMin: return "clamp_min";
    case UnaryOp::ClampMax: return "clamp_max";
    case UnaryOp::GtScalar: return "gt";
  }
  return "unary op";
}

const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Pow: return "pow";
    case BinaryOp::Maximum: return "maximum";
    case BinaryOp::Minimum: return "minimum";
    case BinaryOp::Eq: return "eq";
    case BinaryOp::Ne: return "ne";
    case BinaryOp::Gt: return "gt";
    case BinaryOp::Ge: return "ge";
    case BinaryOp::Lt: return "lt";
    case BinaryOp::Le: return "le";
    case BinaryOp::ReluGrad: return "relu_grad";
  }
  return "binary op";
}

const char* reduce_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::ArgMax: return "argmax";
  }
  return "reduction";
}

void check_attention_args(const Desc& scores, const AttentionKernelOpts& o, const char* kernel) {
  if (o.batch < 0 || o.heads < 0 || o.tq < 0 || o.tk < 0 || !(o.dropout >= 0.0 && o.dropout < 1.0))
    throw std::invalid_argument(std::string(kernel) + ": bad options (dropout " + std::to_string(o.dropout) +
                                "); sizes must be >= 0 and dropout in [0, 1)");
  if (!is_floating(scores.dtype) || !scores.contiguous() || scores.numel() != o.batch * o.heads * o.tq * o.tk)
    throw std::invalid_argument(std::string(kernel) + ": scores must be contiguous float with batch*heads*tq*tk = " +
                                std::to_string(o.batch * o.heads * o.tq * o.tk) + " elements");
}

void check_bias_relu_args(const Desc& a, const Desc& b, const Desc& bias, double p, const char* kernel) {
  if (!(p >= 0.0 && p < 1.0))
    throw std::invalid_argument(std::string(kernel) + ": dropout p = " + std::to_string(p) + " is outside [0, 1)");
  const bool b_ok = b.dtype == a.dtype || (a.dtype == DType::Float32 && b.dtype == DType::BFloat16);
  if ((a.dtype != DType::Float32 && a.dtype != DType::Float64) || !b_ok || !a.contiguous() || !b.contiguous() ||
      a.numel() != b.numel() || a.ndim < 1)
    throw std::invalid_argument(std::string(kernel) + ": operands must be contiguous tensors of one size, in float32 "
                                "or float64 (or bfloat16 beside float32; call .contiguous() first), got " +
                                dtype_name(a.dtype) + " and " + dtype_name(b.dtype));
  const int64_t N = a.shape[a.ndim - 1];
  if (bias.data && (bias.dtype != a.dtype || !bias.contiguous() || bias.numel() != N))
    throw std::invalid_argument(std::string(kernel) + ": bias must be contiguous with " + std::to_string(N) +
                                " elements (the last dim) of the input's dtype");
}

}  // namespace nl
