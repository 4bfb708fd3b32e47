// conv2d as im2col + one GEMM over the whole batch, and max_pool2d, with their backward passes.
#include <stdexcept>

#include "autograd/functions.h"
#include "tensor/ops_nn.h"

namespace nl {

Variable conv2d(const Variable& x, const Variable& w_in, const Variable& b, int64_t stride, int64_t padding) {
  const Variable w = autocast(w_in, AutocastOp::Conv2d);  // bfloat16 under autocast (cached per update)
  if (x.dim() != 4 || w.dim() != 4)
    throw std::invalid_argument("conv2d: input must be [N, C, H, W] and weight [O, C, kh, kw], got " +
                                shape_str(x.shape()) + " and " + shape_str(w.shape()));
  if (x.size(1) != w.size(1))
    throw std::invalid_argument("conv2d: input has " + std::to_string(x.size(1)) + " channels, weight expects " +
                                std::to_string(w.size(1)));
  if (stride < 1 || padding < 0) throw std::invalid_argument("conv2d: stride must be >= 1 and padding >= 0");
  const Window2d win{w.size(2), w.size(3), stride, padding};
  const Shape xs = x.shape();
  const auto [OH, OW] = window_output_hw(xs[2], xs[3], win, "conv2d");
  const int64_t N = xs[0], O = w.size(0), L = N * OH * OW;
  // [C*kh*kw, N*OH*OW], rounded to the weight's dtype (bfloat16 under autocast: the product's operand,
  // and what the graph keeps); im2col itself runs on x's float dtype
  Tensor cols = im2col(x.data(), win).to(w.dtype() == DType::BFloat16 ? DType::BFloat16 : x.dtype());
  Tensor w2 = w.data().reshape({O, cols.size(0)});
  Tensor y2 = nl::matmul(w2, cols);  // [O, N*OH*OW]
  if (b.defined()) binary_into(BinaryOp::Add, y2, y2, b.data().view({O, 1}));
  Tensor y = y2.view({O, N, OH, OW}).permute({1, 0, 2, 3}).contiguous();
  std::vector<Variable> inputs{x, w};
  const bool has_b = b.defined();
  if (has_b) inputs.push_back(b);
  Shape wshape = w.shape();
  return make_result(y, "Conv2d", inputs,
                     [cols, w2, win, xs, O, L, has_b, wshape](const Tensor& gy, const std::vector<bool>& n) {
                       Tensor g2 = gy.permute({1, 0, 2, 3}).contiguous().view({O, L});
                       const Tensor gl = g2.to(cols.dtype());  // the products' operand
                       std::vector<Tensor> r(has_b ? 3 : 2);
                       if (n[1]) r[1] = nl::matmul(gl, cols.transpose(0, 1)).view(wshape);
                       if (has_b && n[2]) r[2] = nl::sum(g2, {1});
                       if (n[0]) r[0] = col2im(nl::matmul(w2.transpose(0, 1), gl), xs, win);
                       return r;
                     },
                     {saved(w.data(), "weight"), saved(cols, "im2col columns")}, "stride=" + std::to_string(stride) + ", padding=" + std::to_string(padding));
}

Variable max_pool2d(const Variable& x, int64_t kernel, int64_t stride, int64_t padding) {
  if (x.dim() != 4) throw std::invalid_argument("max_pool2d: input must be [N, C, H, W], got " + shape_str(x.shape()));
  if (stride == 0) stride = kernel;
  if (kernel < 1 || stride < 1 || padding < 0 || 2 * padding > kernel)
    throw std::invalid_argument("max_pool2d: need kernel >= 1, stride >= 1, 0 <= padding <= kernel/2");
  const Window2d win{kernel, kernel, stride, padding};
  MaxPoolResult r = max_pool2d_with_indices(x.data(), win);
  return make_result(r.out, "MaxPool2d", {x},
                     [idx = r.argmax, xs = x.shape(), win](const Tensor& gy, const std::vector<bool>&) {
                       return std::vector<Tensor>{max_pool2d_backward(gy, idx, xs, win)};
                     },
                     {saved(r.argmax, "arg-max indices")}, "kernel=" + std::to_string(kernel));
}

}  // namespace nl
