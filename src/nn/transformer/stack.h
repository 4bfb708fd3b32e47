#pragma once
// What the encoder and decoder stacks share: token embeddings scaled by sqrt(d_model) (unless
// no_scale_embedding), plus sinusoidal or learned positions, then dropout (fairseq's forward_embedding).
#include "nn/transformer/config.h"
#include "nn/transformer/positions.h"

namespace nl {

/// Base of TransformerEncoder and TransformerDecoder: children embed_tokens (unless shared from another
/// stack, see the constructor) and embed_positions, in fairseq's names.
class TransformerStackBase : public Module {
 public:
  std::shared_ptr<Embedding> embed_tokens;  ///< [V, D], N(0, D^-0.5), zero padding row
  std::shared_ptr<SinusoidalPositionalEmbedding> sinusoidal_positions;  ///< set unless cfg.learned_pos
  std::shared_ptr<LearnedPositionalEmbedding> learned_positions;        ///< set when cfg.learned_pos
  /// The "layers" container (children "0", "1", ...).
  std::shared_ptr<Module> layers;
  /// Final norm of a pre-norm stack (the side's norm, make_final_norm); null in post-norm. Call it with
  /// nl::norm_forward(*layer_norm, x, pad_mask).
  std::shared_ptr<Module> layer_norm;
  double embed_scale;
  int64_t padding_idx, max_positions;

 protected:
  /// `embed` is registered as child "embed_tokens" when `own_embed`; a table owned by another stack
  /// (share_all_embeddings) is used but not registered, so every parameter is counted once.
  TransformerStackBase(std::string type_name, const TransformerConfig& cfg, std::shared_ptr<Embedding> embed,
                       bool own_embed, int64_t max_positions, transformer_detail::Side side);
  /// Registers "layers" then, in pre-norm, "layer_norm" (call after filling `layers`; the derived
  /// constructor then converts everything with to(cfg.dtype)).
  void finish(const TransformerConfig& cfg);
  /// dropout(embed_scale * embed_tokens(tokens) + pos(positions)): tokens, positions int64 [B, T] -> [B, T, D].
  Variable embed(const Tensor& tokens, const Tensor& positions);
  double dropout_p;
  transformer_detail::Side side_;
};

}  // namespace nl
