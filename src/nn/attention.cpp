#include "nn/attention.h"

#include <cmath>
#include <stdexcept>

#include "autograd/functions.h"
#include "autograd/functions/self_attention.h"
#include "nn/init.h"

namespace nl {

namespace {
std::shared_ptr<Linear> projection(int64_t in, int64_t out, bool bias, double gain) {
  auto l = std::make_shared<Linear>(in, out, bias);
  NoGradGuard ng;
  Tensor w = l->weight.data();
  init::xavier_uniform_(w, gain);
  return l;
}
}  // namespace

MultiheadAttention::MultiheadAttention(int64_t d_model, int64_t n_heads, double attention_dropout, bool bias,
                                       int64_t kd, int64_t vd, const std::string& impl)
    : Module("MultiheadAttention"),
      embed_dim(d_model),
      num_heads(n_heads),
      head_dim(n_heads > 0 ? d_model / n_heads : 0),
      kdim(kd > 0 ? kd : d_model),
      vdim(vd > 0 ? vd : d_model),
      dropout(attention_dropout),
      composite(impl == "composite") {
  if (d_model < 1 || n_heads < 1 || d_model % n_heads != 0)
    throw std::invalid_argument("MultiheadAttention: d_model (" + std::to_string(d_model) +
                                ") must be a positive multiple of n_heads (" + std::to_string(n_heads) +
                                "); choose a head count that divides the model width");
  if (!(attention_dropout >= 0.0 && attention_dropout < 1.0))
    throw std::invalid_argument("MultiheadAttention: attention_dropout must be in [0, 1), got " +
                                std::to_string(attention_dropout));
  if (impl != "fused" && impl != "composite")
    throw std::invalid_argument("MultiheadAttention: impl must be 'fused' or 'composite', got '" + impl + "'");
  // fairseq: "Empirically observed the convergence to be much better with the scaled initialization".
  const double gain = (kdim == d_model && vdim == d_model) ? 1.0 / std::sqrt(2.0) : 1.0;
  k_proj = register_module("k_proj", projection(kdim, d_model, bias, gain));
  v_proj = register_module("v_proj", projection(vdim, d_model, bias, gain));
  q_proj = register_module("q_proj", projection(d_model, d_model, bias, gain));
  out_proj = register_module("out_proj", projection(d_model, d_model, bias, 1.0));
  // Under autocast q, k and v feed only the attention's bfloat16 products: written in bfloat16 by their
  // projections (no float32 write and cast pass).
  for (const auto& p : {q_proj, k_proj, v_proj}) p->autocast_output = true;
  if (bias) {
    NoGradGuard ng;
    Tensor b = out_proj->bias.data();
    init::zeros_(b);
  }
}

Variable MultiheadAttention::split_heads(const Variable& x) const {
  return transpose(reshape(x, {x.size(0), x.size(1), num_heads, head_dim}), 1, 2);
}

Variable MultiheadAttention::forward(const Variable& query, const Variable& key, const Variable& value,
                                     const MhaOptions& o) {
  const bool reuse = o.cache && o.static_kv && o.cache->k.defined();
  auto shp = [](const Variable& x) { return x.defined() ? shape_str(x.shape()) : std::string("undefined"); };
  const bool ok_q = query.dim() == 3 && query.size(2) == embed_dim;
  const bool ok_kv = reuse || (key.dim() == 3 && value.dim() == 3 && key.size(0) == query.size(0) &&
                               value.size(0) == query.size(0) && key.size(1) == value.size(1) &&
                               key.size(2) == kdim && value.size(2) == vdim);
  if (!ok_q || !ok_kv)
    throw std::invalid_argument("MultiheadAttention: need query [B, Tq, " + std::to_string(embed_dim) + "], key [B, Tk, " +
                                std::to_string(kdim) + "], value [B, Tk, " + std::to_string(vdim) + "]; got query " +
                                shp(query) + ", key " + shp(key) + ", value " + shp(value));
  const int64_t B = query.size(0), Tq = query.size(1);
  AttentionOptions ao;
  ao.key_padding_mask = o.key_padding_mask;
  ao.attn_mask = o.attn_mask;
  ao.causal = o.causal;
  ao.dropout = dropout;
  ao.training = is_training();
  ao.autocast_output = true;  // h feeds only out_proj's product: bfloat16 under autocast
  // Self-attention in training and scoring (no incremental cache) runs its q, k, v projections as one
  // product (self_attention()); the projections' own forward hooks, if any, need the three calls.
  const bool packed = !composite && !o.cache && key.impl() == query.impl() && value.impl() == query.impl() &&
                      !q_proj->has_forward_hooks() && !k_proj->has_forward_hooks() && !v_proj->has_forward_hooks();
  if (packed) {
    const Variable h = self_attention(query, {q_proj->weight, k_proj->weight, v_proj->weight},
                                      {q_proj->bias, k_proj->bias, v_proj->bias}, num_heads, ao);
    return (*out_proj)(reshape(transpose(h, 1, 2), {B, Tq, embed_dim}));
  }
  // Under autocast the projections take bfloat16 operands: each distinct input is cast once here (self-
  // attention reads one tensor three times, encoder-decoder attention its memory twice), not once per
  // projection; without autocast these are the inputs themselves.
  const Variable qx = autocast(query, AutocastOp::Linear);
  Variable q = split_heads((*q_proj)(qx));
  Variable k, v;
  if (reuse) {
    k = Variable(o.cache->k);
    v = Variable(o.cache->v);
  } else {
    const Variable kx = key.impl() == query.impl() ? qx : autocast(key, AutocastOp::Linear);
    const Variable vx = value.impl() == key.impl() ? kx : autocast(value, AutocastOp::Linear);
    k = split_heads((*k_proj)(kx));
    v = split_heads((*v_proj)(vx));
    if (o.cache) {
      if (!o.static_kv && o.cache->k.defined()) {
        k = cat({Variable(o.cache->k), k}, 2);
        v = cat({Variable(o.cache->v), v}, 2);
      }
      o.cache->k = k.data();
      o.cache->v = v.data();
    }
  }
  Variable h = composite ? attention_composite(q, k, v, ao) : attention(q, k, v, ao);  // [B, H, Tq, dh]
  return (*out_proj)(reshape(transpose(h, 1, 2), {B, Tq, embed_dim}));
}

Variable MultiheadAttention::operator()(const Variable& query, const Variable& key, const Variable& value,
                                        const MhaOptions& o) {
  Variable y = forward(query, key, value, o);
  run_forward_hooks({query, key, value}, y);
  return y;
}

std::string MultiheadAttention::extra_repr() const {
  return "embed_dim=" + std::to_string(embed_dim) + ", num_heads=" + std::to_string(num_heads) +
         ", dropout=" + std::to_string(dropout) + ", impl=" + (composite ? "composite" : "fused");
}

}  // namespace nl
