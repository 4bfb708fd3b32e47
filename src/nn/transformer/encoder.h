#pragma once
// The Transformer encoder stack (fairseq TransformerEncoder): embeddings, positions, encoder layers and,
// in pre-norm, a final norm. Usable alone, e.g. under a sentence classifier.
#include "nn/transformer/layers.h"
#include "nn/transformer/stack.h"

namespace nl {

/// Encoder stack: embeddings, positions, layers, final norm in pre-norm. Usable alone (classifiers).
/// Reads src_vocab, padding_idx, d_model, n_heads, ffn_dim, encoder_layers, the dropouts, activation,
/// normalize_before, norm, norm_options, norm_placement, learned_pos, max_source_positions,
/// no_scale_embedding, attention_impl and dtype (tgt_vocab and decoder fields are ignored).
class TransformerEncoder : public TransformerStackBase {
 public:
  /// Builds its own token embeddings [src_vocab, d_model]. Throws std::invalid_argument from
  /// cfg.validate_encoder().
  explicit TransformerEncoder(const TransformerConfig& cfg);
  /// Uses `embed_tokens` (registered as this encoder's child "embed_tokens").
  TransformerEncoder(const TransformerConfig& cfg, std::shared_ptr<Embedding> embed_tokens);
  /// src_tokens int64 [B, S] padded with padding_idx -> states [B, S, D] and padding mask [B, S]
  /// (int64, 1 = pad). Throws std::invalid_argument on other shapes and when S > max_source_positions.
  EncoderOut forward(const Tensor& src_tokens);
  EncoderOut operator()(const Tensor& src_tokens) { return forward(src_tokens); }
  std::vector<std::shared_ptr<TransformerEncoderLayer>> layer_list;  ///< the children of `layers`
};

}  // namespace nl
