// Matrix products: matmul (with broadcast batch dims) and the fused linear layer y = x W^T + b.
#include "autograd/functions.h"

namespace nl {

Variable matmul(const Variable& a_in, const Variable& b_in) {
  // Under autocast the operands are cast to bfloat16 (Cast nodes) and the product accumulates in float32.
  const Variable a = autocast(a_in, AutocastOp::MatMul), b = autocast(b_in, AutocastOp::MatMul);
  Tensor x = a.data(), y = b.data();
  return make_result(nl::matmul(x, y), "MatMul", {a, b},
                     [x, y](const Tensor& g_out, const std::vector<bool>& n) {
                       // the gradient's products in the operands' dtype (float32 results for bfloat16 ones)
                       const Tensor g = g_out.to(x.dtype());
                       Tensor ga, gb;
                       if (n[0]) ga = sum_to(nl::matmul(g, y.transpose(-1, -2)), x.shape());
                       if (n[1]) {
                         if (y.dim() == 2 && x.dim() > 2)  // fold a's batch into rows: one GEMM
                           gb = nl::matmul(x.reshape({-1, x.size(-1)}).transpose(0, 1), g.reshape({-1, g.size(-1)}));
                         else
                           gb = sum_to(nl::matmul(x.transpose(-1, -2), g), y.shape());
                       }
                       return std::vector<Tensor>{ga, gb};
                     },
                     {saved(x, "input a"), saved(y, "input b")});
}

Variable linear(const Variable& x_in, const Variable& w_in, const Variable& b, bool autocast_output) {
  // Under autocast x and W are cast to bfloat16 (W's copy from the weight-cast cache) and the product
  // accumulates in float32 onto the float32 bias; with autocast_output the sum is rounded to bfloat16.
  const Variable x = autocast(x_in, AutocastOp::Linear), w = autocast(w_in, AutocastOp::Linear);
  if (w.dim() != 2 || x.size(-1) != w.size(1))
    throw std::invalid_argument("linear: input " + shape_str(x.shape()) + " does not match weight " +
                                shape_str(w.shape()) + " (expected [..., " + std::to_string(w.dim() == 2 ? w.size(1) : -1) +
                                "])");
  Tensor xv = x.data(), wv = w.data();
  const int64_t in = w.size(1), out = w.size(0);
  if (b.defined() && b.shape() != Shape{out})
    throw std::invalid_argument("linear: bias " + shape_str(b.shape()) + " should be [" + std::to_string(out) + "]");
  const Tensor x2 = xv.reshape({-1, in}), wt = wv.transpose(0, 1);
  Tensor y;
  if (autocast_output && xv.dtype() == DType::BFloat16)  // bfloat16 operands: a bfloat16 result
    y = b.defined() ? nl::addmm(b.data(), x2, wt, DType::BFloat16) : nl::matmul(x2, wt, DType::BFloat16);
  else
    y = b.defined() ? nl::addmm(b.data(), x2, wt) : nl::matmul(x2, wt);
  Shape os = xv.shape();
  os.back() = out;
  std::vector<Variable> inputs{x, w};
  if (b.defined()) inputs.push_back(b);
  const bool has_b = b.defined();
  // An input that arrived in bfloat16 (an attention's autocast_output) gets its gradient in bfloat16 from
  // the product (the float32 accumulator rounded once), which is what that input's producer reads.
  const bool gx16 = x_in.dtype() == DType::BFloat16 && xv.dtype() == DType::BFloat16;
  return make_result(y.view(os), "Linear", inputs,
                     [xv, wv, in, out, has_b, gx16](const Tensor& g, const std::vector<bool>& n) {
                       Tensor g2 = g.reshape({-1, out});
                       const Tensor gl = g2.to(xv.dtype());  // product operand (bfloat16 under autocast)
                       Tensor x2 = xv.reshape({-1, in});
                       std::vector<Tensor> r(has_b ? 3 : 2);
                       if (n[0])
                         r[0] = (gx16 ? nl::matmul(gl, wv, DType::BFloat16) : nl::matmul(gl, wv)).view(xv.shape());
                       if (n[1]) r[1] = nl::matmul(gl.transpose(0, 1), x2);
                       if (has_b && n[2]) r[2] = sum_rows(g2);
                       return r;
                     },
                     {saved(xv, "input x"), saved(wv, "weight")});
}

}  // namespace nl
