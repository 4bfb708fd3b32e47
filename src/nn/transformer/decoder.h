#pragma once
// The Transformer decoder stack (fairseq TransformerDecoder): embeddings, positions, decoder layers, the
// final norm in pre-norm, and the output projection to the vocabulary.
#include "nn/transformer/layers.h"
#include "nn/transformer/stack.h"

namespace nl {

/// Decoder stack: embeddings, positions, causal self-attention, encoder attention, FFN, output projection.
/// The output projection is the embedding table itself when `tie_output` (share_decoder_input_output_embed
/// or share_all_embeddings), otherwise its own weight [tgt_vocab, D] ~ N(0, D^-0.5) named
/// "output_projection.weight" (no bias), as fairseq.
class TransformerDecoder : public TransformerStackBase {
 public:
  /// `embed_tokens` [tgt_vocab, D]; registered as child "embed_tokens" only when `own_embed` (false when
  /// the encoder owns the shared table). Call cfg.validate() first.
  TransformerDecoder(const TransformerConfig& cfg, std::shared_ptr<Embedding> embed_tokens, bool own_embed);
  /// Logits [B, T, V] for prev_output_tokens [B, T] attending to `enc`. With `state`, prev_output_tokens
  /// holds every token decoded so far (T = state->steps() + 1), only the last position is computed
  /// ([B, 1, V]) and the caches grow by one step; the values equal the full pass at that position. Under
  /// autocast the logits are bfloat16 (as PyTorch's autocast linear; the loss reads them with float32
  /// math), float32 otherwise.
  /// Cached keys/values carry no gradient (incremental decoding is for inference). Throws
  /// std::invalid_argument on bad shapes, T > max_target_positions, or a state that does not match T.
  Variable forward(const Tensor& prev_output_tokens, const EncoderOut& enc, IncrementalState* state = nullptr);
  std::vector<std::shared_ptr<TransformerDecoderLayer>> layer_list;  ///< the children of `layers`
  Variable output_weight;  ///< [V, D]: embed_tokens->weight when tied, else output_projection's weight
};

}  // namespace nl
