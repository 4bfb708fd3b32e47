// Self-attention with fused input projections (self_attention.h): one product x [Wq; Wk; Wv]ᵀ into a packed
// [B, T, 3, H, dh] tensor whose three column blocks are q, k and v as the attention reads them (strided
// heads, no copies); the backward writes dq, dk, dv into one packed gradient, then one product gives dx and
// one the three weight gradients (row blocks of one [3D, Din] result). Three linear() calls instead make
// three narrow products each way and sum three dx tensors.
#include "autograd/functions/self_attention.h"

#include <stdexcept>
#include <string>

#include "autograd/functions/attention_core.h"
#include "backends/profiler.h"

namespace nl {
namespace {
void check_self_attention_args(const Variable& x, const std::array<Variable, 3>& w, const std::array<Variable, 3>& b,
                               int64_t heads) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("self_attention: " + what); };
  if (x.dim() != 3) fail("x must be [B, T, D], got " + shape_str(x.shape()));
  const int64_t din = x.size(2);
  for (const Variable& wi : w)
    if (!wi.defined() || wi.dim() != 2 || wi.size(1) != din || wi.shape() != w[0].shape())
      fail("the q, k, v weights must be three [D, " + std::to_string(din) + "] matrices, got " +
           (wi.defined() ? shape_str(wi.shape()) : std::string("undefined")) + " beside " + shape_str(w[0].shape()));
  const int64_t D = w[0].size(0);
  if (heads < 1 || D % heads != 0)
    fail("heads (" + std::to_string(heads) + ") must divide the projection size " + std::to_string(D));
  const bool has_b = b[0].defined();
  for (const Variable& bi : b)
    if (bi.defined() != has_b || (has_b && bi.shape() != Shape{D}))
      fail("the biases must be all undefined or three [" + std::to_string(D) + "] vectors");
  for (const Variable* v : {&w[0], &w[1], &w[2], &b[0], &b[1], &b[2]})
    if (v->defined() && (v->dtype() != x.dtype() || v->device() != x.device()))
      fail("parameters must have the input's dtype and device (" + dtype_name(x.dtype()) + ", " + x.device().str() +
           "), got " + dtype_name(v->dtype()) + " on " + v->device().str());
}

// Column block i (0: q, 1: k, 2: v) of a packed [B, T, 3, H, dh] tensor as [B, H, T, dh].
Tensor block(const Tensor& packed, int64_t i) { return packed.select(2, i).transpose(1, 2); }
}  // namespace

Variable self_attention(const Variable& x_in, const std::array<Variable, 3>& w_in, const std::array<Variable, 3>& b,
                        int64_t heads, const AttentionOptions& o) {
  check_self_attention_args(x_in, w_in, b, heads);
  prof::OpScope op_scope(prof::Op::Attention);
  // Under autocast x and the weights become bfloat16 (Cast nodes; the weights' copies from the cast cache).
  const Variable x = autocast(x_in, AutocastOp::Linear);
  const std::array<Variable, 3> w{autocast(w_in[0], AutocastOp::Linear), autocast(w_in[1], AutocastOp::Linear),
                                  autocast(w_in[2], AutocastOp::Linear)};
  const DType dt = x.dtype();
  const int64_t B = x.size(0), T = x.size(1), din = x.size(2), D = w[0].size(0), dh = D / heads;
  const Tensor x2 = x.data().reshape({B * T, din});
  const Tensor wcat = nl::cat(std::vector<Tensor>{w[0].data(), w[1].data(), w[2].data()}, 0);  // [3D, din]
  const bool has_b = b[0].defined();
  // The packed projection in x's dtype (bfloat16 under autocast: the attention's operands, rounded once
  // from the float32 accumulator plus the float32 bias).
  const Tensor packed =
      (has_b ? nl::addmm(nl::cat(std::vector<Tensor>{b[0].data(), b[1].data(), b[2].data()}, 0), x2, wcat.transpose(0, 1), dt)
             : nl::matmul(x2, wcat.transpose(0, 1), dt))
          .view({B, T, 3, heads, dh});
  // q, k, v fit by construction; this checks the masks and options against them (attention()'s rules)
  check_attention_args(Variable(block(packed, 0)), Variable(block(packed, 1)), Variable(block(packed, 2)), o);
  Tensor out;
  const AttentionCore c = attention_core_forward(block(packed, 0), block(packed, 1), block(packed, 2), o, out);
  // x's gradient in bfloat16 when x arrived in bfloat16 (what its producer's products read), as linear().
  const bool gx16 = x_in.dtype() == DType::BFloat16 && dt == DType::BFloat16;
  std::vector<Variable> inputs{x, w[0], w[1], w[2]};
  if (has_b) inputs.insert(inputs.end(), b.begin(), b.end());
  std::string note = "fused q/k/v projections, " + std::string(o.causal ? "causal " : "") + "dropout=" +
                     note_number(c.ko.dropout);
  return make_result(
      out, "SelfAttention", inputs,
      [c, x2, wcat, has_b, gx16, B, T, D, dh, heads, xshape = x.shape()](const Tensor& gout,
                                                                          const std::vector<bool>& need) {
        prof::OpScope op_scope(prof::Op::Attention);
        const DType dt = c.q.dtype();
        // dq, dk, dv into one packed gradient, in the packed projection's dtype.
        Tensor gp = Tensor::empty({B, T, 3, heads, dh}, dt, gout.device());
        Tensor dq = block(gp, 0), dk = block(gp, 1), dv = block(gp, 2);
        attention_core_backward(c, gout, dq, dk, dv);
        const Tensor g2 = gp.view({B * T, 3 * D});
        std::vector<Tensor> r(has_b ? 7 : 4);
        if (need[0]) r[0] = (gx16 ? nl::matmul(g2, wcat, DType::BFloat16) : nl::matmul(g2, wcat)).view(xshape);
        if (need[1] || need[2] || need[3]) {
          const Tensor gw = nl::matmul(g2.transpose(0, 1), x2);  // [3D, din]: the three weight gradients
          for (int i = 0; i < 3; ++i)
            if (need[1 + i]) r[1 + i] = gw.slice(0, i * D, (i + 1) * D);
        }
        if (has_b && (need[4] || need[5] || need[6])) {
          const Tensor gb = sum_rows(g2);  // [3D]
          for (int i = 0; i < 3; ++i)
            if (need[4 + i]) r[4 + i] = gb.slice(0, i * D, (i + 1) * D);
        }
        return r;
      },
      {saved(x2, "input x"), saved(wcat, "q, k, v weights"), saved(c.q, "packed q, k, v projection"),
       saved(c.p, "attention weights P (before dropout)")},
      note);
}

}  // namespace nl
