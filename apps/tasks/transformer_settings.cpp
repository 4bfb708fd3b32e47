#include "tasks/transformer_settings.h"

namespace nlapp {
using json = nlohmann::json;

std::vector<OptionSpec> transformer_settings() {
  return {
      option("d_model", OptKind::Int, 256, "Model width (fairseq --encoder-embed-dim = --decoder-embed-dim)", 1, 65536),
      option("n_heads", OptKind::Int, 4, "Attention heads (must divide d_model)", 1, 1024),
      option("ffn_dim", OptKind::Int, 1024, "Feed-forward inner width (--encoder-ffn-embed-dim)", 1, 1 << 20),
      option("encoder_layers", OptKind::Int, 3, "Encoder layers", 1, 256),
      option("decoder_layers", OptKind::Int, 3, "Decoder layers", 1, 256),
      option("dropout", OptKind::Float, 0.3, "Dropout on embeddings and sub-layer outputs", 0, 0.99),
      option("attention_dropout", OptKind::Float, 0.1, "Dropout on attention weights", 0, 0.99),
      option("activation_dropout", OptKind::Float, 0.0, "Dropout after the FFN activation", 0, 0.99),
      choice_option("activation_fn", "relu", {"relu", "gelu"}, "FFN activation"),
      option("normalize_before", OptKind::Bool, true, "Pre-norm (true, Xu et al.'s setting) or post-norm (false)"),
      choice_option("norm_placement", "all", {"all", "final"},
                    "all: --norm in every slot; final: --norm only in the two final stack norms, layernorm elsewhere "
                    "(the released AdaNorm code, seed-code.md 1.3)"),
      option("learned_pos", OptKind::Bool, false, "Learned instead of sinusoidal positions"),
      option("share_all_embeddings", OptKind::Bool, true, "One embedding table for source, target and output"),
      option("share_decoder_input_output_embed", OptKind::Bool, true, "Tie the output projection to the target embedding"),
      option("max_source_positions", OptKind::Int, 1024, "Longest source (tokens incl. </s>)", 1, 1 << 20),
      option("max_target_positions", OptKind::Int, 1024, "Longest target (tokens incl. </s>)", 1, 1 << 20),
  };
}

nl::TransformerConfig transformer_config(const json& s, const json& norm_opts, int64_t src_vocab, int64_t tgt_vocab) {
  nl::TransformerConfig c;
  c.src_vocab = src_vocab;
  c.tgt_vocab = tgt_vocab;
  c.d_model = s.at("d_model").get<int64_t>();
  c.n_heads = s.at("n_heads").get<int64_t>();
  c.ffn_dim = s.at("ffn_dim").get<int64_t>();
  c.encoder_layers = s.at("encoder_layers").get<int64_t>();
  c.decoder_layers = s.at("decoder_layers").get<int64_t>();
  c.dropout = s.at("dropout").get<double>();
  c.attention_dropout = s.at("attention_dropout").get<double>();
  c.activation_dropout = s.at("activation_dropout").get<double>();
  c.activation = s.at("activation_fn").get<std::string>();
  c.normalize_before = s.at("normalize_before").get<bool>();
  c.norm = s.at("norm").get<std::string>();
  c.norm_options = norm_opts;
  c.norm_placement = s.at("norm_placement").get<std::string>();
  c.learned_pos = s.at("learned_pos").get<bool>();
  c.share_all_embeddings = s.at("share_all_embeddings").get<bool>();
  c.share_decoder_input_output_embed = s.at("share_decoder_input_output_embed").get<bool>();
  c.max_source_positions = s.at("max_source_positions").get<int64_t>();
  c.max_target_positions = s.at("max_target_positions").get<int64_t>();
  c.validate();
  return c;
}

}  // namespace nlapp
