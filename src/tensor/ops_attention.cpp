// Front end of the attention kernels (Vaswani et al. 2017, Eq. 1; docs/attention.md): the row kernels
// (masks, softmax, dropout; forward and backward) and the GEMM over the [B, H] grid of heads, see
// tensor/ops_nn.h.
#include <stdexcept>
#include <string>

#include "tensor/fused_dispatch.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"

namespace nl {

namespace {
// The kernel's options for scores [B, H, Tq, Tk]; throws unless `t` and every defined tensor of
// `like` are contiguous [B, H, Tq, Tk] float tensors of one dtype and device.
AttentionKernelOpts row_opts(const char* op, const Tensor& t, std::initializer_list<const Tensor*> like,
                             const AttentionRowOptions& o) {
  check_floating(t, op);
  if (t.dim() != 4 || !t.is_contiguous())
    throw std::invalid_argument(std::string(op) + ": scores must be contiguous [B, H, Tq, Tk], got " +
                                shape_str(t.shape()));
  check_like(op, t, like, "the row tensors");
  for (const Tensor* p : like)
    if (p->defined() && (p->shape() != t.shape() || !p->is_contiguous()))
      throw std::invalid_argument(std::string(op) + ": every row tensor must be contiguous " + shape_str(t.shape()) +
                                  ", got " + shape_str(p->shape()));
  if (!(o.dropout >= 0 && o.dropout < 1))
    throw std::invalid_argument(std::string(op) + ": dropout must be in [0, 1), got " + std::to_string(o.dropout));
  AttentionKernelOpts k;
  k.batch = t.size(0), k.heads = t.size(1), k.tq = t.size(2), k.tk = t.size(3);
  k.scale = o.scale, k.causal = o.causal, k.dropout = o.dropout, k.seed = o.seed, k.offset = o.offset;
  return k;
}

// Row stride of a [B, H, rows, cols] operand with a dense last dim and non-overlapping rows.
void check_dense_rows(const char* op, const Tensor& t) {
  const auto& s = t.strides();
  if (t.dim() != 4 || !((s[3] == 1 || t.size(3) <= 1) && s[2] >= t.size(3)))
    throw std::invalid_argument(std::string(op) + ": operand " + shape_str(t.shape()) +
                                " must be [B, H, rows, cols] with a dense last dim (call .contiguous())");
}
}  // namespace

bool attention_bf16_operands(const Tensor& scores) {
  return scores.defined() && scores.dtype() == DType::Float32 && fused_for(scores).attention_bf16_operands();
}

namespace {
// Whether `dropped` is the bfloat16 operand (attention_bf16_operands); throws when it is bfloat16 where
// the kernels do not take it, or not of the scores' shape and device.
bool bf16_operand(const char* op, const Tensor& dropped, const Tensor& scores) {
  if (!dropped.defined() || dropped.dtype() != DType::BFloat16) return false;
  if (!attention_bf16_operands(scores))
    throw std::invalid_argument(std::string(op) + ": a bfloat16 `dropped` needs float32 scores on a backend whose "
                                "attention kernels write it (attention_bf16_operands); pass it in the scores' dtype");
  if (dropped.shape() != scores.shape() || !dropped.is_contiguous() || dropped.device() != scores.device())
    throw std::invalid_argument(std::string(op) + ": `dropped` must be contiguous " + shape_str(scores.shape()) +
                                " on the scores' device, got " + shape_str(dropped.shape()));
  return true;
}
}  // namespace

void attention_softmax_out(Tensor& probs, Tensor& dropped, const Tensor& scores, const Tensor& key_padding,
                           const Tensor& attn_mask, const AttentionRowOptions& o) {
  observe(AutocastOp::Softmax, scores);
  const char* op = "attention_softmax";
  const bool op16 = bf16_operand(op, dropped, scores), drop = o.dropout > 0 || op16;  // drop: `dropped` written
  const AttentionKernelOpts k = row_opts(op, scores, {&probs, drop && !op16 ? &dropped : &probs}, o);
  if (drop && !dropped.defined()) throw std::invalid_argument("attention_softmax: dropout > 0 needs `dropped`");
  check_like(op, scores, {&key_padding, &attn_mask}, "masks");
  if (key_padding.defined() && (key_padding.shape() != Shape{k.batch, k.tk} || !key_padding.is_contiguous()))
    throw std::invalid_argument("attention_softmax: key_padding must be contiguous [B, Tk] = [" +
                                std::to_string(k.batch) + ", " + std::to_string(k.tk) + "], got " +
                                shape_str(key_padding.shape()));
  if (attn_mask.defined() && (attn_mask.shape() != Shape{k.tq, k.tk} || !attn_mask.is_contiguous()))
    throw std::invalid_argument("attention_softmax: attn_mask must be contiguous [Tq, Tk] = [" +
                                std::to_string(k.tq) + ", " + std::to_string(k.tk) + "], got " +
                                shape_str(attn_mask.shape()));
  fused_for(scores).attention_softmax(probs.desc(), drop ? dropped.desc() : Desc{}, scores.desc(),
                                      opt_desc(key_padding), opt_desc(attn_mask), k);
  probs.bump_version();
  if (drop) dropped.bump_version();
}

void attention_softmax_backward_out(Tensor& gscores, Tensor& dropped, const Tensor& gprobs, const Tensor& probs,
                                    const AttentionRowOptions& o) {
  observe(AutocastOp::Softmax, probs);
  const char* op = "attention_softmax_backward";
  const bool op16 = bf16_operand(op, dropped, probs), drop = o.dropout > 0 || op16;
  const AttentionKernelOpts k = row_opts(op, probs, {&gscores, &gprobs, drop && !op16 ? &dropped : &gprobs}, o);
  if (drop && !dropped.defined())
    throw std::invalid_argument("attention_softmax_backward: dropout > 0 needs `dropped`");
  fused_for(probs).attention_softmax_backward(gscores.desc(), drop ? dropped.desc() : Desc{}, gprobs.desc(),
                                              probs.desc(), k);
  gscores.bump_version();
  if (drop) dropped.bump_version();
}

void matmul_heads_out(Tensor& c, const Tensor& a, bool ta, const Tensor& b, bool tb) {
  const char* op = "matmul_heads";
  check_same(a, b, op);
  observe(AutocastOp::Gemm, a);
  const bool mixed = a.dtype() == DType::BFloat16;  // bfloat16 operands, float32 accumulation
  if (mixed) {
    check_same_device(a, c, op);
    if (c.dtype() != DType::Float32 && c.dtype() != DType::BFloat16)
      throw std::invalid_argument(std::string(op) + ": bfloat16 operands give a float32 or bfloat16 result, got a " +
                                  dtype_name(c.dtype()) + " output");
  } else {
    check_floating(c, op);
    check_same(c, a, op);
  }
  for (const Tensor* t : std::initializer_list<const Tensor*>{&c, &a, &b}) check_dense_rows(op, *t);
  const int64_t B = c.size(0), H = c.size(1), M = c.size(2), N = c.size(3);
  const int64_t K = ta ? a.size(2) : a.size(3);
  const Shape want_a = ta ? Shape{B, H, K, M} : Shape{B, H, M, K};
  const Shape want_b = tb ? Shape{B, H, N, K} : Shape{B, H, K, N};
  if (a.shape() != want_a || b.shape() != want_b)
    throw std::invalid_argument(std::string(op) + ": shapes " + shape_str(a.shape()) + (ta ? "^T" : "") + " @ " +
                                shape_str(b.shape()) + (tb ? "^T" : "") + " do not give " + shape_str(c.shape()));
  if (B * H * M * N == 0) return;
  if (K == 0) {
    c.zero_();
    return;
  }
  const auto &sa = a.strides(), &sb = b.strides(), &sc = c.strides();
  auto* pa = static_cast<const char*>(a.desc().data);
  auto* pb = static_cast<const char*>(b.desc().data);
  auto* pc = static_cast<char*>(c.desc().data);
  Backend& be = backend_for(c.device().type);
  if (mixed) {  // one grid of B x H products (outer = sequences, batch = heads)
    MixedGemm g;
    g.c = c.dtype();
    g.M = M, g.N = N, g.K = K, g.batch = H, g.outer = B;
    g.A = {pa, sa[2], sa[1], sa[0], ta};
    g.B = {pb, sb[2], sb[1], sb[0], tb};
    g.C = pc, g.ldc = sc[2], g.strideC = sc[1], g.outerC = sc[0];
    g.device_index = c.device().index;
    be.gemm_mixed(g);
  } else {
    be.gemm_grid(c.dtype(), ta, tb, M, N, K, 1.0, pa, sa[2], sa[1], sa[0], pb, sb[2], sb[1], sb[0], 0.0, pc, sc[2],
                 sc[1], sc[0], H, B, c.device().index);
  }
  c.bump_version();
}

}  // namespace nl
