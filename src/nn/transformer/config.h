#pragma once
// Hyper-parameters of the Transformer (fairseq's argument names) and the builders every stack shares.
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "nn/embedding.h"
#include "nn/linear.h"

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
  /// "final" needs normalize_before (post-norm stacks have no final norm).
  std::string norm_placement = "all";
  bool learned_pos = false;              ///< learned instead of sinusoidal positions
  int64_t max_source_positions = 1024, max_target_positions = 1024;
  bool share_decoder_input_output_embed = false;
  bool share_all_embeddings = false;     ///< one table for source, target and output (needs src_vocab == tgt_vocab)
  bool no_scale_embedding = false;
  std::string attention_impl = "fused";  ///< "fused" (nl::attention) | "composite" (nl::attention_composite)
  DType dtype = DType::Float32;          ///< parameter dtype (Float64 for gradient checks)
  /// Throws std::invalid_argument naming the bad field and the fix (d_model % n_heads, vocab < 4, ...).
  void validate() const;
  /// The checks of the fields an encoder alone reads (everything but tgt_vocab, decoder_layers,
  /// max_target_positions and the sharing flags); validate() runs it too.
  void validate_encoder() const;
};

namespace transformer_detail {
/// The norm of a per-layer slot: `cfg.norm` with placement "all", plain layernorm with "final".
std::shared_ptr<Module> make_layer_norm(const TransformerConfig& cfg);
/// The final norm of a pre-norm stack: always `cfg.norm` with cfg.norm_options.
std::shared_ptr<Module> make_final_norm(const TransformerConfig& cfg);
/// fairseq's Embedding(): N(0, d^-0.5) with a zero padding row.
std::shared_ptr<Embedding> make_token_embedding(int64_t vocab, const TransformerConfig& cfg);
/// fairseq's Linear(): xavier_uniform weight, zero bias.
std::shared_ptr<Linear> make_xavier_linear(int64_t in, int64_t out);
/// The activation by name ("relu" | "gelu").
Variable activate(const std::string& name, const Variable& x);
/// Throws std::invalid_argument unless tokens is int64 [B, T] with 1 <= T <= max_positions; `what` is
/// "source" or "target" (naming the --max-*-positions flag in the message).
void check_tokens(const Tensor& tokens, int64_t max_positions, const char* what);
}  // namespace transformer_detail

}  // namespace nl
