// conv2d as im2col + one GEMM over the whole batch, and max_pool2d, with their backward passes.
#include <stdexcept>

#include "autograd/functions.h"

namespace nl {

Variable conv2d(const Variable& x, const Variable& w, const Variable& b, int64_t stride, int64_t padding) {
  if (x.dim() != 4 || w.dim() != 4)
    throw std::invalid_argument("conv2d: input must be [N, C, H, W] and weight [O, C, kh, kw], got " +
                                shape_str(x.shape()) + " and " + shape_str(w.shape()));
  if (x.size(1) != w.size(1))
    throw std::invalid_argument("conv2d: input has " + std::to_string(x.size(1)) + " channels, weight expects " +
                                std::to_string(w.size(1)));
  if (stride < 1 || padding < 0) throw std::invalid_argument("conv2d: stride must be >= 1 and padding >= 0");
  Conv2dGeom g{x.size(0), x.size(1), x.size(2), x.size(3), w.size(2), w.size(3), stride, stride, padding, padding};
  const int64_t O = w.size(0), OH = g.OH(), OW = g.OW(), L = g.N * OH * OW, CKK = g.C * g.kh * g.kw;
  if (OH < 1 || OW < 1)
    throw std::invalid_argument("conv2d: a " + std::to_string(g.kh) + "x" + std::to_string(g.kw) +
                                " kernel does not fit the " + std::to_string(g.H) + "x" + std::to_string(g.W) +
                                " input (padding " + std::to_string(padding) + ")");
  Tensor xc = x.data().contiguous();
  Backend& be = backend_for(xc.device().type);
  Tensor cols = Tensor::empty({CKK, L}, xc.dtype(), xc.device());
  be.fused().im2col(cols.desc(), xc.desc(), g);
  Tensor w2 = w.data().reshape({O, CKK});
  Tensor y2 = nl::matmul(w2, cols);  // [O, N*OH*OW]
  if (b.defined()) binary_into(BinaryOp::Add, y2, y2, b.data().view({O, 1}));
  Tensor y = y2.view({O, g.N, OH, OW}).permute({1, 0, 2, 3}).contiguous();
  std::vector<Variable> inputs{x, w};
  const bool has_b = b.defined();
  if (has_b) inputs.push_back(b);
  Shape wshape = w.shape();
  return make_result(y, "Conv2d", inputs,
                     [cols, w2, g, O, L, has_b, wshape](const Tensor& gy, const std::vector<bool>& n) {
                       Tensor g2 = gy.permute({1, 0, 2, 3}).contiguous().view({O, L});
                       std::vector<Tensor> r(has_b ? 3 : 2);
                       if (n[1]) r[1] = nl::matmul(g2, cols.transpose(0, 1)).view(wshape);
                       if (has_b && n[2]) r[2] = nl::sum(g2, {1});
                       if (n[0]) {
                         Tensor dcols = nl::matmul(w2.transpose(0, 1), g2);
                         Tensor gx = Tensor::zeros({g.N, g.C, g.H, g.W}, gy.dtype(), gy.device());
                         backend_for(gy.device().type).fused().col2im(gx.desc(), dcols.desc(), g);
                         r[0] = gx;
                       }
                       return r;
                     },
                     {saved(w.data(), "weight"), saved(cols, "im2col columns")}, "stride=" + std::to_string(stride) + ", padding=" + std::to_string(padding));
}

Variable max_pool2d(const Variable& x, int64_t kernel, int64_t stride, int64_t padding) {
  if (x.dim() != 4) throw std::invalid_argument("max_pool2d: input must be [N, C, H, W], got " + shape_str(x.shape()));
  if (stride == 0) stride = kernel;
  if (kernel < 1 || stride < 1 || padding < 0 || 2 * padding > kernel)
    throw std::invalid_argument("max_pool2d: need kernel >= 1, stride >= 1, 0 <= padding <= kernel/2");
  Conv2dGeom g{x.size(0), x.size(1), x.size(2), x.size(3), kernel, kernel, stride, stride, padding, padding};
  if (g.OH() < 1 || g.OW() < 1) throw std::invalid_argument("max_pool2d: window larger than the input");
  Tensor xc = x.data().contiguous();
  Tensor y = Tensor::empty({g.N, g.C, g.OH(), g.OW()}, xc.dtype(), xc.device());
  Tensor idx = Tensor::empty(y.shape(), DType::Int64, xc.device());
  backend_for(xc.device().type).fused().maxpool2d(y.desc(), idx.desc(), xc.desc(), g);
  return make_result(y, "MaxPool2d", {x},
                     [idx, g](const Tensor& gy, const std::vector<bool>&) {
                       Tensor gx = Tensor::zeros({g.N, g.C, g.H, g.W}, gy.dtype(), gy.device());
                       backend_for(gy.device().type).fused().maxpool2d_backward(gx.desc(), gy.contiguous().desc(), idx.desc(), g);
                       return std::vector<Tensor>{gx};
                     },
                     {saved(idx, "arg-max indices")}, "kernel=" + std::to_string(kernel));
}

}  // namespace nl
