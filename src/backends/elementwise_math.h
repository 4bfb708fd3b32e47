#pragma once
// The scalar math of the elementwise kernels, shared by the CPU loops and the CUDA kernels (compiled
// for both with NL_HOST_DEVICE) so both devices compute the same formulas.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/backend.h"
#include "backends/host_device.h"

namespace nl {

/// y = op(x) with the op's scalar parameters a, b (UnaryOp); int64 supports the ops of
/// unary_supports_int (others return x; callers reject them first).
template <typename T>
NL_HOST_DEVICE inline T unary_apply(UnaryOp op, T x, double a, double b) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case UnaryOp::Neg: return -x;
      case UnaryOp::Exp: return std::exp(x);
      case UnaryOp::Log: return std::log(x);
      case UnaryOp::Sqrt: return std::sqrt(x);
      case UnaryOp::Rsqrt: return T(1) / std::sqrt(x);
      case UnaryOp::Tanh: return std::tanh(x);
      case UnaryOp::Sigmoid: return T(1) / (T(1) + std::exp(-x));
      case UnaryOp::Relu: return x < T(0) ? T(0) : x;  // NaN stays NaN (PyTorch)
      case UnaryOp::Gelu: return T(0.5) * x * (T(1) + std::erf(x * T(M_SQRT1_2)));
      case UnaryOp::GeluGrad: {
        T cdf = T(0.5) * (T(1) + std::erf(x * T(M_SQRT1_2)));
        T pdf = std::exp(T(-0.5) * x * x) * T(0.3989422804014327);
        return cdf + x * pdf;
      }
      case UnaryOp::Abs: return std::abs(x);
      case UnaryOp::Square: return x * x;
      case UnaryOp::Reciprocal: return T(1) / x;
      case UnaryOp::Sign: return T((x > T(0)) - (x < T(0)));
      case UnaryOp::PowScalar: return a == 2.0 ? x * x : (a == 0.5 ? std::sqrt(x) : T(std::pow(x, T(a))));
      case UnaryOp::Affine: return T(a) * x + T(b);
      case UnaryOp::ClampMin: return x < T(a) ? T(a) : x;
      case UnaryOp::ClampMax: return x > T(a) ? T(a) : x;
      case UnaryOp::GtScalar: return x > T(a) ? T(1) : T(0);
    }
  } else {
    switch (op) {
      case UnaryOp::Neg: return -x;
      case UnaryOp::Abs: return x < 0 ? -x : x;
      case UnaryOp::Square: return x * x;
      case UnaryOp::Sign: return T((x > 0) - (x < 0));
      case UnaryOp::Relu: return x > 0 ? x : 0;
      case UnaryOp::Affine: return T(a * double(x) + b);
      case UnaryOp::ClampMin: return x < T(a) ? T(a) : x;
      case UnaryOp::ClampMax: return x > T(a) ? T(a) : x;
      case UnaryOp::GtScalar: return double(x) > a ? 1 : 0;
      default: return x;  // unreachable: CpuBackend::unary rejects these before its parallel loop
    }
  }
  return x;
}

/// op(x, y) (BinaryOp; comparisons give 1/0 in T).
template <typename T>
NL_HOST_DEVICE inline T binary_apply(BinaryOp op, T x, T y) {
  switch (op) {
    case BinaryOp::Add: return x + y;
    case BinaryOp::Sub: return x - y;
    case BinaryOp::Mul: return x * y;
    case BinaryOp::Div: return x / y;
    case BinaryOp::Pow: return T(std::pow(x, y));
    case BinaryOp::Maximum: return (x > y || x != x) ? x : y;  // NaN in either gives NaN (torch.maximum)
    case BinaryOp::Minimum: return (x < y || x != x) ? x : y;
    case BinaryOp::Eq: return x == y;
    case BinaryOp::Ne: return x != y;
    case BinaryOp::Gt: return x > y;
    case BinaryOp::Ge: return x >= y;
    case BinaryOp::Lt: return x < y;
    case BinaryOp::Le: return x <= y;
    case BinaryOp::ReluGrad: return y <= T(0) ? T(0) : x;  // a NaN output passes the gradient (PyTorch's threshold_backward)
  }
  return x;
}

}  // namespace nl
