#include <algorithm>
#include <stdexcept>

#include "tensor/ops.h"

namespace nl {

void check_same(const Tensor& a, const Tensor& b, const char* op) {
  if (!a.defined() || !b.defined()) throw std::invalid_argument(std::string(op) + ": undefined tensor");
  if (a.dtype() != b.dtype())
    throw std::invalid_argument(std::string(op) + ": dtype mismatch (" + dtype_name(a.dtype()) + " vs " +
                                dtype_name(b.dtype()) + "); convert one with .to(dtype)");
  check_same_device(a, b, op);
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  if (a.device() != b.device())
    throw std::invalid_argument(std::string(op) + ": tensors on different devices (" + a.device().str() + " vs " +
                                b.device().str() + "); move one with .to(Device)");
}

void check_floating(const Tensor& x, const char* op) {
  if (!x.defined()) throw std::invalid_argument(std::string(op) + ": undefined tensor");
  if (x.dtype() == DType::BFloat16) throw no_bf16_error(op);
  if (!is_floating(x.dtype()))
    throw std::invalid_argument(std::string(op) + ": expects a float tensor, got " + dtype_name(x.dtype()) +
                                "; convert with .to(DType::Float32)");
}

namespace {
// Integer division by zero traps (SIGFPE) instead of giving a value: refuse it up front.
void check_int_divisor(BinaryOp op, const Tensor& b) {
  if (op != BinaryOp::Div || b.dtype() != DType::Int64) return;
  const auto v = b.to_vector<int64_t>();
  if (std::find(v.begin(), v.end(), int64_t{0}) != v.end())
    throw std::invalid_argument("div: int64 division by zero; convert to float (.to(DType::Float32)) for inf/nan "
                                "results, or mask the zero divisors");
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  check_same(a, b, binary_name(op));
  check_int_divisor(op, b);
  Shape s = broadcast_shapes(a.shape(), b.shape(), binary_name(op));
  Tensor out = Tensor::empty(s, a.dtype(), a.device());
  backend_for(a.device().type).binary(op, out.desc(), a.expand(s).desc(), b.expand(s).desc());
  return out;
}
}  // namespace

void binary_into(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b) {
  check_same(a, b, binary_name(op));
  check_same(out, a, binary_name(op));
  check_int_divisor(op, b);
  const Shape& s = out.shape();
  backend_for(a.device().type).binary(op, out.desc(), a.expand(s).desc(), b.expand(s).desc());
  out.bump_version();
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Pow, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Minimum, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ne, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ge, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Le, a, b); }
Tensor relu_grad(const Tensor& g, const Tensor& y) { return binary(BinaryOp::ReluGrad, g, y); }

Tensor unary(UnaryOp op, const Tensor& x, double a, double b) {
  if (!x.defined()) throw std::invalid_argument(std::string(unary_name(op)) + ": undefined tensor");
  if (!unary_supports_int(op)) check_floating(x, unary_name(op));
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_for(x.device().type).unary(op, out.desc(), x.desc(), a, b);
  return out;
}

Tensor neg(const Tensor& x) { return unary(UnaryOp::Neg, x); }
Tensor exp(const Tensor& x) { return unary(UnaryOp::Exp, x); }
Tensor log(const Tensor& x) { return unary(UnaryOp::Log, x); }
Tensor sqrt(const Tensor& x) { return unary(UnaryOp::Sqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary(UnaryOp::Rsqrt, x); }
Tensor tanh(const Tensor& x) { return unary(UnaryOp::Tanh, x); }
Tensor sigmoid(const Tensor& x) { return unary(UnaryOp::Sigmoid, x); }
Tensor relu(const Tensor& x) { return unary(UnaryOp::Relu, x); }
Tensor gelu(const Tensor& x) { return unary(UnaryOp::Gelu, x); }
Tensor gelu_grad(const Tensor& x) { return unary(UnaryOp::GeluGrad, x); }
Tensor abs(const Tensor& x) { return unary(UnaryOp::Abs, x); }
Tensor square(const Tensor& x) { return unary(UnaryOp::Square, x); }
Tensor reciprocal(const Tensor& x) { return unary(UnaryOp::Reciprocal, x); }
Tensor sign(const Tensor& x) { return unary(UnaryOp::Sign, x); }
Tensor pow(const Tensor& x, double p) { return unary(UnaryOp::PowScalar, x, p); }
Tensor affine(const Tensor& x, double a, double b) { return unary(UnaryOp::Affine, x, a, b); }
Tensor clamp_min(const Tensor& x, double lo) { return unary(UnaryOp::ClampMin, x, lo); }
Tensor clamp_max(const Tensor& x, double hi) { return unary(UnaryOp::ClampMax, x, hi); }
Tensor gt(const Tensor& x, double v) { return unary(UnaryOp::GtScalar, x, v); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same(a, b, "where");
  check_same_device(cond, a, "where (condition)");
  Shape s = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = Tensor::empty(s, a.dtype(), a.device());
  backend_for(a.device().type).where(out.desc(), cond.expand(s).desc(), a.expand(s).desc(), b.expand(s).desc());
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  Tensor v = Tensor::scalar(value, x.dtype(), x.device());
  return where(mask, v, x);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, double s) { return affine(a, 1.0, s); }
Tensor operator-(const Tensor& a, double s) { return affine(a, 1.0, -s); }
Tensor operator*(const Tensor& a, double s) { return affine(a, s, 0.0); }
Tensor operator/(const Tensor& a, double s) { return affine(a, 1.0 / s, 0.0); }
Tensor operator*(double s, const Tensor& a) { return affine(a, s, 0.0); }
Tensor operator+(double s, const Tensor& a) { return affine(a, 1.0, s); }

void synchronize(Device d) { backend_for(d.type).synchronize(d.index); }

}  // namespace nl
