#pragma once
// The Transformer of Vaswani et al. 2017 ("Attention Is All You Need") as fairseq builds it
// (fairseq/models/transformer): token embeddings scaled by sqrt(d_model), sinusoidal or learned positions
// that start after the padding index, encoder and decoder stacks of pre-norm or post-norm layers (pre-norm
// adds a final norm on each stack), and an output projection optionally tied to the embeddings.
// Every norm slot takes any norm by name (nn/norm/factory.h). Shapes: tokens [B, T] int64, padded with
// `padding_idx`; hidden states [B, T, D]; logits [B, T, V].
// TransformerConfig is in config.h, EncoderOut and IncrementalState in state.h, the stacks in
// encoder.h / decoder.h, the layers in layers.h.
#include <memory>

#include "nn/transformer/config.h"
#include "nn/transformer/decoder.h"
#include "nn/transformer/encoder.h"
#include "nn/transformer/state.h"

namespace nl {

/// Encoder-decoder Transformer (fairseq TransformerModel). Init as fairseq: Xavier-uniform projections
/// with zero biases, embeddings N(0, d_model^-0.5) with a zero padding row. With share_all_embeddings
/// the one table is the encoder's child (encoder.embed_tokens.weight) and is used, not registered, by the
/// decoder, so parameters(), state_dict() and optimizers see it once. Throws std::invalid_argument from
/// cfg.validate().
class TransformerModel : public Module {
 public:
  explicit TransformerModel(const TransformerConfig& cfg);
  /// Teacher-forced logits [B, T, V] for source [B, S] and decoder input prev_output_tokens [B, T]
  /// (target shifted right, starting with </s>, as fairseq's collater builds it). Throws
  /// std::invalid_argument when a sequence is longer than the model's positions, naming both numbers.
  Variable forward(const Tensor& src_tokens, const Tensor& prev_output_tokens);
  /// Runs the encoder only.
  EncoderOut encode(const Tensor& src_tokens);
  /// Decoder logits [B, T, V] for prev_output_tokens [B, T]. With `state`, the tokens are all those
  /// decoded so far and only the last position is computed: returns [B, 1, V] and extends the cache,
  /// giving exactly the logits of the full decoder at that position.
  Variable decode(const Tensor& prev_output_tokens, const EncoderOut& enc, IncrementalState* state = nullptr);
  const TransformerConfig& config() const { return cfg_; }
  std::shared_ptr<TransformerEncoder> encoder;
  std::shared_ptr<TransformerDecoder> decoder;

 private:
  TransformerConfig cfg_;
};

}  // namespace nl
