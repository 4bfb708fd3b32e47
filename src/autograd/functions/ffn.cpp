// The Transformer FFN y = fc2(dropout(relu(fc1(x)))) as one op, run over blocks of rows so that each
// [rows, ffn_dim] hidden block stays in the L2 cache between the GEMMs and the activation: forward,
// fc1's GEMM, the bias + ReLU + dropout kernel and fc2's GEMM per block (under autocast without dropout
// on the hidden layer, fc1's GEMM adds the bias and applies the ReLU itself); backward, the four GEMMs and
// the ReLU/dropout backward per block, the weight gradients accumulated block by block (beta = 1).
// Done as separate ops over all rows, each of these passes went to memory (docs/architecture.md).
#include <algorithm>
#include <tuple>

#include "autograd/functions.h"
#include "tensor/ops_nn.h"

namespace nl {
namespace {
// Rows per block: the [rows, F] hidden block is 512 Ki elements (2 MiB of floats, about one L2 of
// the machines measured; 128 Ki-element blocks made more, smaller GEMM calls and were no faster, see
// docs/architecture.md). One block on devices other than the CPU.
int64_t auto_block_rows(int64_t M, int64_t F, const Device& d) {
  if (!d.is_cpu()) return std::max<int64_t>(M, 1);
  return std::max<int64_t>(16, (int64_t(512) * 1024) / std::max<int64_t>(F, 1));
}

void check_ffn_args(const Variable& x, const Variable& w1, const Variable& b1, const Variable& w2, const Variable& b2,
                    double p, int64_t block_rows) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("ffn_relu: " + what);
  };
  if (!(p >= 0 && p < 1)) fail("dropout p must be in [0, 1), got " + std::to_string(p));
  if (block_rows < 0) fail("block_rows must be >= 0 (0: chosen for the cache), got " + std::to_string(block_rows));
  if (w1.dim() != 2 || w2.dim() != 2 || w2.size(0) != w1.size(1) || w2.size(1) != w1.size(0))
    fail("weights " + shape_str(w1.shape()) + " and " + shape_str(w2.shape()) + " should be [F, D] and [D, F]");
  const int64_t F = w1.size(0), D = w1.size(1);
  if (x.dim() < 1 || x.size(-1) != D) fail("input " + shape_str(x.shape()) + " should end in D = " + std::to_string(D));
  if (b1.defined() && b1.shape() != Shape{F}) fail("fc1 bias " + shape_str(b1.shape()) + " should be [" + std::to_string(F) + "]");
  if (b2.defined() && b2.shape() != Shape{D}) fail("fc2 bias " + shape_str(b2.shape()) + " should be [" + std::to_string(D) + "]");
  // Weights in x's dtype; biases too, or float32 for bfloat16 x and weights (autocast).
  const DType bias_dt = x.dtype() == DType::BFloat16 ? DType::Float32 : x.dtype();
  for (const Variable* v : {&w1, &b1, &w2, &b2})
    if (v->defined() && (v->dtype() != ((v == &b1 || v == &b2) ? bias_dt : x.dtype()) || v->device() != x.device()))
      fail("parameters must have the input's dtype and device (" + dtype_name(x.dtype()) + ", " + x.device().str() +
           (x.dtype() == DType::BFloat16 ? "; float32 biases" : "") + ")");
}
}  // namespace

Variable ffn_relu(const Variable& x_in, const Variable& w1_in, const Variable& b1, const Variable& w2_in,
                  const Variable& b2, double p, bool training, int64_t block_rows) {
  // Under autocast x, w1, w2 become bfloat16 (the weights from the weight-cast cache).
  const Variable x = autocast(x_in, AutocastOp::FFN), w1 = autocast(w1_in, AutocastOp::FFN),
                 w2 = autocast(w2_in, AutocastOp::FFN);
  check_ffn_args(x, w1, b1, w2, b2, p, block_rows);
  const double q = training ? p : 0.0;
  Tensor xc = x.data().contiguous();
  // mixed: bfloat16 operands; the products, the bias + ReLU + dropout and the result in float32, the
  // hidden layer kept in bfloat16 (fc2's operand). Otherwise everything in x's dtype.
  const bool mixed = xc.dtype() == DType::BFloat16;
  const DType ft = mixed ? DType::Float32 : xc.dtype();
  const int64_t F = w1.size(0), D = w1.size(1), M = xc.numel() / D;
  const int64_t R = block_rows > 0 ? block_rows : auto_block_rows(M, F, xc.device());
  Tensor x2 = xc.view({M, D}), W1 = w1.data(), W2 = w2.data();
  Tensor B1 = b1.defined() ? b1.data().contiguous() : Tensor(), B2 = b2.defined() ? b2.data().contiguous() : Tensor();
  uint64_t seed = 0, offset = 0;
  if (q > 0) std::tie(seed, offset) = next_random_offset((uint64_t)(M * F));
  Tensor h = Tensor::empty({M, F}, xc.dtype(), xc.device()), y = Tensor::empty({M, D}, ft, xc.device());
  // Mixed without dropout on the hidden layer: fc1's product adds the bias and applies the ReLU itself and
  // writes the bfloat16 hidden block (no float32 block and activation pass; ReLU commutes with rounding).
  const bool fused_relu = mixed && q == 0 && B1.defined();
  Tensor hf = mixed && !fused_relu ? Tensor::empty({std::min(R, M), F}, ft, xc.device()) : Tensor();  // float32 block
  // fc2's bias: written into y first and accumulated onto (BLAS), or in the product's epilogue (mixed)
  if (B2.defined() && !mixed) y.copy_(B2.view({1, D}));
  const Tensor W1t = W1.transpose(0, 1), W2t = W2.transpose(0, 1);
  for (int64_t r0 = 0; r0 < M; r0 += R) {
    const int64_t r1 = std::min(M, r0 + R);
    Tensor hb = h.slice(0, r0, r1), yb = y.slice(0, r0, r1);
    if (fused_relu) {  // bias and ReLU in fc1's product, rounded once to bfloat16 (the same values)
      addmm_relu_out(hb, B1, x2.slice(0, r0, r1), W1t);
    } else {
      Tensor hw = mixed ? hf.slice(0, 0, r1 - r0) : hb;
      matmul_out(hw, x2.slice(0, r0, r1), W1t, 0.0);
      // element (r, j) of the whole [M, F] layer draws counter offset + r * F + j, as dropout() would;
      // mixed: written to hb rounded once to bfloat16 (fc2's operand and what the graph keeps)
      bias_relu_dropout_out(hb, hw, B1, q, seed, offset + (uint64_t)(r0 * F));
    }
    if (B2.defined() && mixed)
      addmm_out(yb, B2, hb, W2t);
    else
      matmul_out(yb, hb, W2t, B2.defined() ? 1.0 : 0.0);
  }
  Shape os = xc.shape();
  std::vector<Variable> inputs{x, w1};
  if (b1.defined()) inputs.push_back(b1);
  inputs.push_back(w2);
  if (b2.defined()) inputs.push_back(b2);
  const bool has_b1 = b1.defined(), has_b2 = b2.defined();
  return make_result(
      y.view(os), "FFN", inputs,
      [x2, h, W1, W2, q, has_b1, has_b2, M, D, F, R, os](const Tensor& g, const std::vector<bool>& n) {
        // needs: x, w1, [b1], w2, [b2] in input order
        const size_t iw2 = has_b1 ? 3 : 2;
        const bool want_x = n[0], want_w1 = n[1], want_b1 = has_b1 && n[2], want_w2 = n[iw2],
                   want_b2 = has_b2 && n[iw2 + 1];
        const bool mixed = h.dtype() == DType::BFloat16;
        Tensor gy = g.contiguous().view({M, D});
        const Tensor gyl = gy.to(h.dtype());  // the products' operand (bfloat16 when mixed)
        const DType ft = gy.dtype();
        Tensor gx = want_x ? Tensor::empty({M, D}, ft, gy.device()) : Tensor();
        Tensor gw1 = want_w1 ? Tensor::zeros({F, D}, ft, gy.device()) : Tensor();
        Tensor gb1 = want_b1 ? Tensor::zeros({F}, ft, gy.device()) : Tensor();
        Tensor gw2 = want_w2 ? Tensor::zeros({D, F}, ft, gy.device()) : Tensor();
        Tensor gb2 = want_b2 ? nl::sum(gy, {0}) : Tensor();
        const bool want_h = want_x || want_w1 || want_b1;
        if (M > 0 && (want_h || want_w2)) {
          const int64_t rows = std::min(R, M);
          Tensor gh = Tensor::empty({rows, F}, ft, gy.device());
          Tensor ghl = mixed ? Tensor::empty({rows, F}, h.dtype(), gy.device()) : gh;  // gh as operand
          Tensor gbb = want_b1 ? Tensor::empty({F}, ft, gy.device()) : Tensor();
          for (int64_t r0 = 0; r0 < M; r0 += R) {
            const int64_t r1 = std::min(M, r0 + R);
            const double acc = r0 == 0 ? 0.0 : 1.0;  // weight gradients: the first block writes, later ones add
            Tensor gyb = gyl.slice(0, r0, r1), hb = h.slice(0, r0, r1);
            if (want_w2) matmul_out(gw2, gyb.transpose(0, 1), hb, acc);
            if (!want_h) continue;
            Tensor ghb = gh.slice(0, 0, r1 - r0);
            matmul_out(ghb, gyb, W2, 0.0);
            // mixed: the bfloat16 hidden block read as it is, the gradient written rounded once to
            // bfloat16 for fc1's products (the bias gradient summed before the rounding)
            Tensor ghbl = mixed ? ghl.slice(0, 0, r1 - r0) : ghb;
            bias_relu_dropout_backward_out(ghbl, gbb, ghb, hb, q);
            if (want_b1) binary_into(BinaryOp::Add, gb1, gb1, gbb);
            if (want_w1) matmul_out(gw1, ghbl.transpose(0, 1), x2.slice(0, r0, r1), acc);
            if (want_x) {
              Tensor gxb = gx.slice(0, r0, r1);
              matmul_out(gxb, ghbl, W1, 0.0);
            }
          }
        }
        std::vector<Tensor> r{want_x ? gx.view(os) : Tensor(), gw1};
        if (has_b1) r.push_back(gb1);
        r.push_back(gw2);
        if (has_b2) r.push_back(gb2);
        return r;
      },
      {saved(x2, "input x"), saved(h, "hidden (activated)"), saved(W1, "fc1 weight"), saved(W2, "fc2 weight")},
      "p=" + note_number(q));
}

}  // namespace nl
