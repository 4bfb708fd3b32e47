#include "tasks/transformer_settings.h"

#include <algorithm>

#include "engine/norm_settings.h"
#include "nn/norm/factory.h"

namespace nlapp {
using json = nlohmann::json;

namespace {
std::vector<std::string> side_norm_choices() {
  std::vector<std::string> v{"auto"};
  for (const auto& n : nl::norm_names()) v.push_back(n);
  return v;
}
// "auto" (and settings without the key) -> "" = the config's rule.
std::string side_norm(const json& s, const char* key) {
  const std::string v = s.value(key, std::string("auto"));
  return v == "auto" ? "" : v;
}
}  // namespace

std::vector<OptionSpec> transformer_settings_with(const std::map<std::string, nlohmann::json>& defaults) {
  std::vector<OptionSpec> v;
  for (OptionSpec o : transformer_settings()) {
    auto d = defaults.find(o.key);
    if (d == defaults.end()) continue;
    o.def = d->second;
    v.push_back(std::move(o));
  }
  return v;
}

std::vector<OptionSpec> token_batch_settings(int64_t bench_vocab, const std::string& vocab_help,
                                             const std::string& len_help) {
  return {option("max_tokens", OptKind::Int, 4096, "Tokens per batch, padding included (fairseq --max-tokens)", 1, 1e9),
          option("bench_vocab", OptKind::Int, bench_vocab, "normlab bench: " + vocab_help, 5, 1e7),
          option("bench_batch", OptKind::Int, 128, "normlab bench: sentences per step", 1, 1e6),
          option("bench_len", OptKind::Int, 32, "normlab bench: " + len_help, 2, 1e5)};
}

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
      choice_option("encoder_norm", "auto", side_norm_choices(),
                    "Norm of the encoder's slots; auto: --norm's value"),
      choice_option("decoder_norm", "auto", side_norm_choices(),
                    "Norm of the decoder's slots; auto: --norm's value, except that a batch-statistic --norm "
                    "(batchnorm, powernorm-v, powernorm) goes to the encoder only and the decoder gets layernorm, "
                    "as the released PowerNorm code runs (seed-code.md 2.8)"),
      choice_option("bn_reading", "paper", {"paper", "sync", "mask"},
                    "What batchnorm slots compute: paper (masked BatchNorm as Shen et al. describe it), sync (the "
                    "released PowerNorm code's 'batch' baseline MaskSyncBatchNorm: layer scaling, pads filled with the "
                    "channel mean, momentum 0.05) or mask (the released MaskBatchNorm: eps as a clamp, batch statistics "
                    "in eval); seed-code.md 2.9"),
      option("allow_decoder_batch_stats", OptKind::Bool, false,
             "Allow a batch-statistic decoder norm (its statistics leak future target tokens in training)"),
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
  c.encoder_norm = side_norm(s, "encoder_norm");
  c.decoder_norm = side_norm(s, "decoder_norm");
  c.allow_decoder_batch_stats = s.value("allow_decoder_batch_stats", false);
  // Each stack's options for its own norm (the caller's norm_opts where it is --norm's), and PN's
  // warmup_iters = --warmup-updates for the per-layer norms as the released code wires it
  // (seed-code.md 2.7; the final norms get TransformerConfig::final_norm_warmup_iters).
  auto opts_for = [&](const std::string& name) {
    json o = nl::canonical_norm_name(name) == nl::canonical_norm_name(c.norm) ? norm_opts : norm_options(s, name);
    const auto& keys = nl::norm_option_keys(name);
    if (o.is_object() && !o.contains("warmup_iters") &&
        std::find(keys.begin(), keys.end(), "warmup_iters") != keys.end())
      o["warmup_iters"] = s.value("warmup_updates", json(0));
    return o;
  };
  c.encoder_norm_options = opts_for(c.encoder_norm_name());
  c.decoder_norm_options = opts_for(c.decoder_norm_name());
  c.learned_pos = s.at("learned_pos").get<bool>();
  c.share_all_embeddings = s.at("share_all_embeddings").get<bool>();
  c.share_decoder_input_output_embed = s.at("share_decoder_input_output_embed").get<bool>();
  c.max_source_positions = s.at("max_source_positions").get<int64_t>();
  c.max_target_positions = s.at("max_target_positions").get<int64_t>();
  c.validate();
  return c;
}

}  // namespace nlapp
