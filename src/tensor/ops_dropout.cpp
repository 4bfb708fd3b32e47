// Front end of dropout and its fused neighbours: dropout, the residual add around it, and the FFN's
// bias + ReLU + dropout with its backward (tensor/ops_nn.h).
#include <stdexcept>
#include <string>

#include "tensor/fused_dispatch.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"

namespace nl {

namespace {
void check_p(const char* op, double p) {
  if (!(p >= 0 && p < 1)) throw std::invalid_argument(std::string(op) + ": p must be in [0, 1), got " + std::to_string(p));
}

// out (or gx, or the saved out) beside x (or gout): one shape and device, x's dtype or bfloat16 beside
// a float32 x (autocast's hidden layer and its gradient).
void check_rows(const char* op, const Tensor& out, const Tensor& x, const Tensor& bias) {
  check_floating(x, op);  // refuses a bfloat16 x, naming the op
  if (!(out.dtype() == DType::BFloat16 && x.dtype() == DType::Float32)) check_same(out, x, op);
  check_same_device(out, x, op);
  check_like(op, x, {&bias}, "bias");
  if (x.dim() != 2 || out.shape() != x.shape() || !x.is_contiguous() || !out.is_contiguous())
    throw std::invalid_argument(std::string(op) + ": needs contiguous [rows, N] tensors of one shape, got " +
                                shape_str(out.shape()) + " and " + shape_str(x.shape()));
  if (bias.defined() && bias.shape() != Shape{x.size(1)})
    throw std::invalid_argument(std::string(op) + ": bias " + shape_str(bias.shape()) + " should be [" +
                                std::to_string(x.size(1)) + "]");
}
}  // namespace

Tensor dropout(const Tensor& x, double p, uint64_t seed, uint64_t offset) {
  check_floating(x, "dropout");
  check_p("dropout", p);
  Tensor in = x.contiguous();
  Tensor out = Tensor::empty(in.shape(), in.dtype(), in.device());
  fused_for(in).dropout(out.desc(), in.desc(), p, seed, offset);
  return out;
}

Tensor dropout_add(const Tensor& residual, const Tensor& x, double p, uint64_t seed, uint64_t offset) {
  check_floating(x, "dropout_add");
  check_p("dropout_add", p);
  check_same(residual, x, "dropout_add");
  if (residual.shape() != x.shape())
    throw std::invalid_argument("dropout_add: residual " + shape_str(residual.shape()) + " and input " +
                                shape_str(x.shape()) + " must have one shape");
  Tensor in = x.contiguous(), r = residual.contiguous();
  Tensor out = Tensor::empty(in.shape(), in.dtype(), in.device());
  fused_for(in).dropout_add(out.desc(), r.desc(), in.desc(), p, seed, offset);
  return out;
}

void bias_relu_dropout_out(Tensor& out, const Tensor& x, const Tensor& bias, double p, uint64_t seed,
                           uint64_t offset) {
  check_p("bias_relu_dropout", p);
  check_rows("bias_relu_dropout", out, x, bias);
  fused_for(x).bias_relu_dropout(out.desc(), x.desc(), opt_desc(bias), p, seed, offset);
  out.bump_version();
}

void bias_relu_dropout_backward_out(Tensor& gx, Tensor& gbias, const Tensor& gout, const Tensor& out, double p) {
  check_p("bias_relu_dropout_backward", p);
  check_rows("bias_relu_dropout_backward", gx, gout, gbias);
  check_rows("bias_relu_dropout_backward", out, gout, Tensor());
  fused_for(gout).bias_relu_dropout_backward(gx.desc(), opt_desc(gbias), gout.desc(), out.desc(), p);
  gx.bump_version();
  if (gbias.defined()) gbias.bump_version();
}

}  // namespace nl
