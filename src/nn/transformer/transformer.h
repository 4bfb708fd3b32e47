#pragma once
// The Transformer of Vaswani et al. 2017 ("Attention Is All You Need") as fairseq builds it
// (fairseq/models/transformer): token embeddings scaled by sqrt(d_model), sinusoidal or learned positions
// that start after the padding index, encoder and decoder stacks of pre-norm or post-norm layers (pre-norm
// adds a final norm on each stack), and an output projection optionally tied to the embeddings.
// Every norm slot takes any norm by name (nn/norm/factory.h). Shapes: tokens [B, T] int64, padded with
// `padding_idx`; hidden states [B, T, D]; logits [B, T, V].
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/module.h"

namespace nl {

/// Hyper-parameters of a Transformer (fairseq's argument names).
struct TransformerConfig {
  int64_t src_vocab = 0, tgt_vocab = 0;  ///< dictionary sizes (specials included)
  int64_t padding_idx = 1;               ///< fairseq's <pad>
  int64_t d_model = 512;                 ///< encoder_embed_dim = decoder_embed_dim
  int64_t n_heads = 8;
  int64_t ffn_dim = 2048;                ///< encoder_ffn_embed_dim = decoder_ffn_embed_dim
  int64_t encoder_layers = 6, decoder_layers = 6;
  double dropout = 0.1, attention_dropout = 0.0, activation_dropout = 0.0;
  std::string activation = "relu";      ///< "relu" | "gelu"
  bool normalize_before = false;         ///< pre-norm (true) or post-norm (false, the original)
  std::string norm = "layernorm";        ///< any name of norm_names()
  nlohmann::json norm_options;           ///< passed to make_norm (e.g. {"C": 2, "impl": "fused"})
  /// "all": every norm slot uses `norm`; "final": only the two final stack norms use `norm` and the
  /// layer norms are plain layernorm (the released AdaNorm code's placement, seed-code.md §1.3).
  std::string norm_placement = "all";
  bool learned_pos = false;              ///< learned instead of sinusoidal positions
  int64_t max_source_positions = 1024, max_target_positions = 1024;
  bool share_decoder_input_output_embed = false;
  bool share_all_embeddings = false;     ///< one table for source, target and output (needs src_vocab == tgt_vocab)
  bool no_scale_embedding = false;
  /// Throws std::invalid_argument naming the bad field and the fix (d_model % n_heads, vocab < 4, ...).
  void validate() const;
};

/// The encoder's output for the decoder: states [B, S, D] and the source padding mask [B, S] (1 = pad).
struct EncoderOut {
  Variable out;
  Tensor padding_mask;
  /// Keeps rows `order` (int64 [B']) of both (beam search reordering).
  EncoderOut index_select(const Tensor& order) const;
};

/// Cached keys/values of every decoder layer for incremental decoding (one entry per attention).
/// Self-attention caches grow by one step per call; encoder-attention caches are computed once.
class IncrementalState {
 public:
  /// Keeps batch rows `order` (int64 [B']) of every cache (beam search reordering).
  void reorder(const Tensor& order);
  /// Number of decoding steps cached so far.
  int64_t steps() const { return steps_; }
  // Implementation detail for the layers: per-attention cached k, v [B, H, T, dh].
  struct Entry {
    Tensor k, v;
  };
  std::vector<Entry> entries;
  int64_t steps_ = 0;
};

/// Encoder stack: embeddings, positions, layers, final norm in pre-norm. Usable alone (classifiers).
class TransformerEncoder;
/// Decoder stack: embeddings, positions, causal self-attention, encoder attention, FFN, output projection.
class TransformerDecoder;

/// Encoder-decoder Transformer (fairseq TransformerModel). Init as fairseq: Xavier-uniform projections
/// with zero biases, embeddings N(0, d_model^-0.5) with a zero padding row.
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
