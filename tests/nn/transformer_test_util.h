#pragma once
// Helpers shared by the Transformer tests: tiny configs and token batches.
#include "nn_test_util.h"

namespace nltest {

/// A tiny Transformer config (d_model 8, 2 heads, FFN 16, one layer per stack, vocab 12, no dropout).
inline nl::TransformerConfig tiny_config(bool pre_norm, const std::string& norm = "layernorm",
                                         nl::DType dtype = nl::DType::Float64) {
  nl::TransformerConfig c;
  c.src_vocab = c.tgt_vocab = 12;
  c.d_model = 8;
  c.n_heads = 2;
  c.ffn_dim = 16;
  c.encoder_layers = c.decoder_layers = 1;
  c.dropout = c.attention_dropout = c.activation_dropout = 0.0;
  c.normalize_before = pre_norm;
  c.norm = norm;
  c.dtype = dtype;
  c.max_source_positions = c.max_target_positions = 16;
  return c;
}

/// int64 tokens [rows.size(), T] from rows of equal length.
inline nl::Tensor tokens(const std::vector<std::vector<int64_t>>& rows) {
  std::vector<int64_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return nl::Tensor::from_vector(flat, {(int64_t)rows.size(), (int64_t)rows[0].size()});
}

}  // namespace nltest
