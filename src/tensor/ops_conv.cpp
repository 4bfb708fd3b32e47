// Front end of the convolution and pooling helpers: im2col / col2im (conv as one GEMM) and max pooling
// with its backward, over NCHW images (tensor/ops_nn.h).
#include <stdexcept>
#include <string>

#include "tensor/fused_dispatch.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"

namespace nl {

namespace {
// The kernels' geometry of window `w` over images of shape `in` [N, C, H, W].
Conv2dGeom geometry(const Shape& in, const Window2d& w, const char* op) {
  if (in.size() != 4) throw std::invalid_argument(std::string(op) + ": input must be [N, C, H, W], got " + shape_str(in));
  window_output_hw(in[2], in[3], w, op);
  return Conv2dGeom{in[0], in[1], in[2], in[3], w.kh, w.kw, w.stride, w.stride, w.padding, w.padding};
}

void check_grad_shape(const char* op, const Tensor& g, const Shape& want) {
  if (g.shape() != want)
    throw std::invalid_argument(std::string(op) + ": gradient " + shape_str(g.shape()) + " should be " + shape_str(want));
}
}  // namespace

std::pair<int64_t, int64_t> window_output_hw(int64_t H, int64_t W, const Window2d& w, const char* op) {
  if (w.kh < 1 || w.kw < 1 || w.stride < 1 || w.padding < 0)
    throw std::invalid_argument(std::string(op) + ": need kernel >= 1, stride >= 1 and padding >= 0");
  const int64_t OH = (H + 2 * w.padding - w.kh) / w.stride + 1, OW = (W + 2 * w.padding - w.kw) / w.stride + 1;
  if (H + 2 * w.padding < w.kh || W + 2 * w.padding < w.kw || OH < 1 || OW < 1)
    throw std::invalid_argument(std::string(op) + ": a " + std::to_string(w.kh) + "x" + std::to_string(w.kw) +
                                " window does not fit the " + std::to_string(H) + "x" + std::to_string(W) +
                                " input (padding " + std::to_string(w.padding) + ")");
  return {OH, OW};
}

Tensor im2col(const Tensor& x, const Window2d& w) {
  check_floating(x, "im2col");
  const Conv2dGeom g = geometry(x.shape(), w, "im2col");
  Tensor xc = x.contiguous();
  Tensor cols = Tensor::empty({g.C * g.kh * g.kw, g.N * g.OH() * g.OW()}, xc.dtype(), xc.device());
  fused_for(xc).im2col(cols.desc(), xc.desc(), g);
  return cols;
}

Tensor col2im(const Tensor& cols, const Shape& input, const Window2d& w) {
  check_floating(cols, "col2im");
  const Conv2dGeom g = geometry(input, w, "col2im");
  check_grad_shape("col2im", cols, {g.C * g.kh * g.kw, g.N * g.OH() * g.OW()});
  Tensor cc = cols.contiguous();
  Tensor gx = Tensor::zeros(input, cc.dtype(), cc.device());
  fused_for(cc).col2im(gx.desc(), cc.desc(), g);
  return gx;
}

MaxPoolResult max_pool2d_with_indices(const Tensor& x, const Window2d& w) {
  check_floating(x, "max_pool2d");
  if (w.kh != w.kw || 2 * w.padding > w.kh)
    throw std::invalid_argument("max_pool2d: need a square window and 0 <= padding <= kernel/2");
  const Conv2dGeom g = geometry(x.shape(), w, "max_pool2d");
  Tensor xc = x.contiguous();
  MaxPoolResult r{Tensor::empty({g.N, g.C, g.OH(), g.OW()}, xc.dtype(), xc.device()), Tensor()};
  r.argmax = Tensor::empty(r.out.shape(), DType::Int64, xc.device());
  fused_for(xc).maxpool2d(r.out.desc(), r.argmax.desc(), xc.desc(), g);
  return r;
}

Tensor max_pool2d_backward(const Tensor& gy, const Tensor& argmax, const Shape& input, const Window2d& w) {
  check_floating(gy, "max_pool2d_backward");
  const Conv2dGeom g = geometry(input, w, "max_pool2d_backward");
  check_grad_shape("max_pool2d_backward", gy, {g.N, g.C, g.OH(), g.OW()});
  if (argmax.dtype() != DType::Int64 || argmax.shape() != gy.shape() || !argmax.is_contiguous())
    throw std::invalid_argument("max_pool2d_backward: argmax must be contiguous int64 " + shape_str(gy.shape()));
  check_same_device(gy, argmax, "max_pool2d_backward");
  Tensor gx = Tensor::zeros(input, gy.dtype(), gy.device());
  fused_for(gy).maxpool2d_backward(gx.desc(), gy.contiguous().desc(), argmax.desc(), g);
  return gx;
}

}  // namespace nl
