#pragma once
// Multi-head attention (Vaswani et al. 2017, Sec. 3.2.2) as fairseq's MultiheadAttention builds it, batch
// first: query [B, Tq, D], key [B, Tk, kdim], value [B, Tk, vdim] -> [B, Tq, D], with an optional cache of
// projected keys/values for incremental decoding.
#include <string>

#include "nn/linear.h"
#include "nn/transformer/state.h"

namespace nl {

/// Masks and cache of one MultiheadAttention call.
struct MhaOptions {
  Tensor key_padding_mask;  ///< [B, Tk] (!= 0 = padding key; Tk counts cached keys too) or undefined
  Tensor attn_mask;         ///< [Tq, Tk] float added to the scores (-inf blocks) or undefined
  bool causal = false;      ///< query i sees keys j <= i + (Tk - Tq) (right-aligned, serves incremental steps)
  /// Incremental decoding cache (k, v as [B, H, T, dh]; values only, no gradient flows into the cache).
  IncrementalState::Entry* cache = nullptr;
  /// false (self-attention): the new keys/values of this call are appended to the cache.
  /// true (encoder attention): computed on the first call, then reused; `key`/`value` are then ignored.
  bool static_kv = false;
};

/// Multi-head attention: q = x Wq^T + bq, k, v likewise, split into H heads of dh = D / H, scaled
/// dot-product attention per head (nl::attention, or nl::attention_composite with impl "composite"),
/// heads merged and projected by out_proj. Init as fairseq's reset_parameters: q/k/v weights
/// xavier_uniform with gain 1/sqrt(2) when kdim = vdim = D (gain 1 otherwise), out_proj weight
/// xavier_uniform, out_proj bias 0; q/k/v biases keep torch.nn.Linear's default U(+-1/sqrt(in)) as in
/// fairseq. Parameter names follow fairseq: q_proj, k_proj, v_proj, out_proj.
/// Throws std::invalid_argument on d_model % n_heads != 0, sizes < 1, dropout outside [0, 1) or an
/// unknown impl.
class MultiheadAttention : public Module {
 public:
  /// kdim, vdim: feature sizes of key and value (0 means d_model). impl: "fused" | "composite".
  MultiheadAttention(int64_t d_model, int64_t n_heads, double attention_dropout = 0.0, bool bias = true,
                     int64_t kdim = 0, int64_t vdim = 0, const std::string& impl = "fused");
  /// query [B, Tq, D], key [B, Tk, kdim], value [B, Tk, vdim] -> [B, Tq, D]. Attention dropout applies in
  /// training mode. Throws std::invalid_argument on mismatched shapes (naming them).
  Variable forward(const Variable& query, const Variable& key, const Variable& value, const MhaOptions& o = {});
  /// forward, then the forward hooks with inputs {query, key, value}.
  Variable operator()(const Variable& query, const Variable& key, const Variable& value, const MhaOptions& o = {});
  std::string extra_repr() const override;

  std::shared_ptr<Linear> q_proj, k_proj, v_proj, out_proj;
  int64_t embed_dim, num_heads, head_dim, kdim, vdim;
  double dropout;
  bool composite;  ///< true: attention_composite, false: attention (the fused op)

 private:
  /// [B, T, H*dh] -> [B, H, T, dh] (a view when x is contiguous).
  Variable split_heads(const Variable& x) const;
};

}  // namespace nl
