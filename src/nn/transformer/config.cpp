#include "nn/transformer/config.h"

#include "nn/norm/masked_norm.h"

#include <cmath>
#include <stdexcept>

#include "nn/init.h"
#include "nn/norm/factory.h"

namespace nl {

namespace {
[[noreturn]] void bad(const std::string& msg) { throw std::invalid_argument("TransformerConfig: " + msg); }
void check_prob(double p, const char* name) {
  if (!(p >= 0.0 && p < 1.0)) bad(std::string(name) + " must be in [0, 1), got " + std::to_string(p));
}
}  // namespace

void TransformerConfig::validate_encoder() const {
  if (src_vocab < 4)
    bad("src_vocab must be >= 4 (the dictionary's specials <s> <pad> </s> <unk>), got " + std::to_string(src_vocab));
  if (padding_idx < 0 || padding_idx >= src_vocab)
    bad("padding_idx " + std::to_string(padding_idx) + " must be a token id in [0, src_vocab)");
  if (d_model < 1 || n_heads < 1 || d_model % n_heads != 0)
    bad("d_model (" + std::to_string(d_model) + ") must be a positive multiple of n_heads (" +
        std::to_string(n_heads) + "): change --d-model or --n-heads");
  if (ffn_dim < 1) bad("ffn_dim must be >= 1, got " + std::to_string(ffn_dim));
  if (encoder_layers < 1) bad("encoder_layers must be >= 1, got " + std::to_string(encoder_layers));
  check_prob(dropout, "dropout");
  check_prob(attention_dropout, "attention_dropout");
  check_prob(activation_dropout, "activation_dropout");
  if (activation != "relu" && activation != "gelu")
    bad("unknown activation '" + activation + "' (valid: relu, gelu)");
  if (norm_placement != "all" && norm_placement != "final")
    bad("unknown norm_placement '" + norm_placement + "' (valid: all, final)");
  if (norm_placement == "final" && !normalize_before)
    bad("norm_placement 'final' puts the norm only in the final stack norms, which exist only in pre-norm: "
        "set normalize_before (--encoder-normalize-before --decoder-normalize-before) or use placement 'all'");
  try {
    if (uses_batch_statistics(*make_norm(norm, d_model, norm_options)))
      bad("norm '" + norm + "' pools statistics over the batch, and the Transformer's layers do not pass padding "
          "masks to their norms yet, so padding would enter the statistics: use a per-token norm (" +
          "layernorm, layernorm-simple, adanorm, rmsnorm, lng, ...)");
  } catch (const std::invalid_argument& e) {
    bad(std::string("norm: ") + e.what());
  }
  if (max_source_positions < 1) bad("max_source_positions must be >= 1, got " + std::to_string(max_source_positions));
  if (!learned_pos && d_model < 4) bad("sinusoidal positions need d_model >= 4; use learned_pos for tinier models");
  if (attention_impl != "fused" && attention_impl != "composite")
    bad("unknown attention_impl '" + attention_impl + "' (valid: fused, composite)");
  if (!is_floating(dtype)) bad("dtype must be float32 or float64, got " + dtype_name(dtype));
}

void TransformerConfig::validate() const {
  validate_encoder();
  if (tgt_vocab < 4)
    bad("tgt_vocab must be >= 4 (the dictionary's specials <s> <pad> </s> <unk>), got " + std::to_string(tgt_vocab));
  if (padding_idx >= tgt_vocab)
    bad("padding_idx " + std::to_string(padding_idx) + " must be a token id in [0, tgt_vocab)");
  if (decoder_layers < 1) bad("decoder_layers must be >= 1, got " + std::to_string(decoder_layers));
  if (max_target_positions < 1) bad("max_target_positions must be >= 1, got " + std::to_string(max_target_positions));
  if (share_all_embeddings && src_vocab != tgt_vocab)
    bad("share_all_embeddings needs one dictionary for both sides, but src_vocab = " + std::to_string(src_vocab) +
        " and tgt_vocab = " + std::to_string(tgt_vocab) + ": use a joined dictionary or drop --share-all-embeddings");
}

namespace transformer_detail {

std::shared_ptr<Module> make_layer_norm(const TransformerConfig& cfg) {
  if (cfg.norm_placement == "all") return make_norm(cfg.norm, cfg.d_model, cfg.norm_options);
  // fairseq's per-layer LayerNorm(embed_dim) without args: a plain affine LayerNorm (eps 1e-5); only the
  // implementation choice carries over.
  nlohmann::json o = nlohmann::json::object();
  if (cfg.norm_options.is_object() && cfg.norm_options.contains("impl")) o["impl"] = cfg.norm_options["impl"];
  return make_norm("layernorm", cfg.d_model, o);
}

std::shared_ptr<Module> make_final_norm(const TransformerConfig& cfg) {
  return make_norm(cfg.norm, cfg.d_model, cfg.norm_options);
}

std::shared_ptr<Embedding> make_token_embedding(int64_t vocab, const TransformerConfig& cfg) {
  auto e = std::make_shared<Embedding>(vocab, cfg.d_model, cfg.padding_idx);
  NoGradGuard ng;
  Tensor w = e->weight.data();
  init::normal_(w, 0.0, std::pow(static_cast<double>(cfg.d_model), -0.5));
  w.select(0, cfg.padding_idx).zero_();
  return e;
}

std::shared_ptr<Linear> make_xavier_linear(int64_t in, int64_t out) {
  auto l = std::make_shared<Linear>(in, out, true);
  NoGradGuard ng;
  Tensor w = l->weight.data(), b = l->bias.data();
  init::xavier_uniform_(w);
  init::zeros_(b);
  return l;
}

Variable activate(const std::string& name, const Variable& x) { return name == "gelu" ? gelu(x) : relu(x); }

void check_tokens(const Tensor& tokens, int64_t max_positions, const char* what) {
  if (!tokens.defined() || tokens.dtype() != DType::Int64 || tokens.dim() != 2 || tokens.size(1) < 1)
    throw std::invalid_argument(std::string(what) + " tokens must be int64 [B, T] with T >= 1, got " +
                                (tokens.defined() ? dtype_name(tokens.dtype()) + " " + shape_str(tokens.shape())
                                                  : std::string("undefined")));
  if (tokens.size(1) > max_positions) {
    const std::string w(what), flag = w == "source" ? "source" : "target";
    throw std::invalid_argument(w + " length " + std::to_string(tokens.size(1)) + " exceeds max_" + flag +
                                "_positions " + std::to_string(max_positions) + ": raise --max-" + flag +
                                "-positions or filter long sentences");
  }
}

}  // namespace transformer_detail

}  // namespace nl
