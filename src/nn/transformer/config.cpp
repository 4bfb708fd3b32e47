#include "nn/transformer/config.h"

#include <algorithm>
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
    make_norm(encoder_norm_name(), d_model, encoder_norm_opts());
  } catch (const std::invalid_argument& e) {
    bad(std::string("encoder norm: ") + e.what());
  }
  if (max_source_positions < 1) bad("max_source_positions must be >= 1, got " + std::to_string(max_source_positions));
  if (!learned_pos && d_model < 4) bad("sinusoidal positions need d_model >= 4; use learned_pos for tinier models");
  if (attention_impl != "fused" && attention_impl != "composite")
    bad("unknown attention_impl '" + attention_impl + "' (valid: fused, composite)");
  if (dtype != DType::Float32 && dtype != DType::Float64)
    bad("dtype must be float32 or float64, got " + dtype_name(dtype) + " (bfloat16 products come from autocast)");
}

void TransformerConfig::validate() const {
  validate_encoder();
  if (tgt_vocab < 4)
    bad("tgt_vocab must be >= 4 (the dictionary's specials <s> <pad> </s> <unk>), got " + std::to_string(tgt_vocab));
  if (padding_idx >= tgt_vocab)
    bad("padding_idx " + std::to_string(padding_idx) + " must be a token id in [0, tgt_vocab)");
  if (decoder_layers < 1) bad("decoder_layers must be >= 1, got " + std::to_string(decoder_layers));
  if (max_target_positions < 1) bad("max_target_positions must be >= 1, got " + std::to_string(max_target_positions));
  std::string dn;
  try {
    dn = decoder_norm_name();
    make_norm(dn, d_model, decoder_norm_opts());
  } catch (const std::invalid_argument& e) {
    bad(std::string("decoder norm: ") + e.what());
  }
  if (!allow_decoder_batch_stats && norm_uses_batch_statistics(dn))
    bad("decoder norm '" + dn + "' pools statistics over the batch, and in a causal decoder those statistics "
        "carry future target tokens into every position (Shen et al. 2020, Sec. 5.1): use a per-token decoder norm "
        "(--decoder-norm layernorm, as the released PowerNorm code) or pass --allow-decoder-batch-stats");
  if (share_all_embeddings && src_vocab != tgt_vocab)
    bad("share_all_embeddings needs one dictionary for both sides, but src_vocab = " + std::to_string(src_vocab) +
        " and tgt_vocab = " + std::to_string(tgt_vocab) + ": use a joined dictionary or drop --share-all-embeddings");
}

namespace {
bool takes(const std::string& norm, const char* key) {
  const auto& k = norm_option_keys(norm);
  return std::find(k.begin(), k.end(), key) != k.end();
}

// The options of a stack's norm: explicit ones as given; else `norm_options` as given when the stack
// uses `norm` itself, restricted to the keys the norm takes when it uses another; plus
// layer_scale_groups = n_heads where taken and unset.
nlohmann::json side_opts(const TransformerConfig& c, const std::string& name, const nlohmann::json& given) {
  nlohmann::json o = nlohmann::json::object();
  if (!given.is_null()) {
    o = given;
  } else if (canonical_norm_name(name) == canonical_norm_name(c.norm)) {
    if (!c.norm_options.is_null()) o = c.norm_options;
  } else if (c.norm_options.is_object()) {
    for (auto it = c.norm_options.begin(); it != c.norm_options.end(); ++it)
      if (takes(name, it.key().c_str())) o[it.key()] = it.value();
  }
  if (o.is_object() && takes(name, "layer_scale_groups") && !o.contains("layer_scale_groups"))
    o["layer_scale_groups"] = c.n_heads;
  return o;
}
}  // namespace

std::string TransformerConfig::encoder_norm_name() const { return encoder_norm.empty() ? norm : encoder_norm; }

std::string TransformerConfig::decoder_norm_name() const {
  if (!decoder_norm.empty()) return decoder_norm;
  return norm_uses_batch_statistics(norm) ? "layernorm" : norm;
}

nlohmann::json TransformerConfig::encoder_norm_opts() const {
  return side_opts(*this, encoder_norm_name(), encoder_norm_options);
}

nlohmann::json TransformerConfig::decoder_norm_opts() const {
  return side_opts(*this, decoder_norm_name(), decoder_norm_options);
}

namespace transformer_detail {

std::shared_ptr<Module> make_layer_norm(const TransformerConfig& cfg, Side side) {
  const bool enc = side == Side::Encoder;
  const nlohmann::json opts = enc ? cfg.encoder_norm_opts() : cfg.decoder_norm_opts();
  if (cfg.norm_placement == "all") return make_norm(enc ? cfg.encoder_norm_name() : cfg.decoder_norm_name(), cfg.d_model, opts);
  // fairseq's per-layer LayerNorm(embed_dim) without args: a plain affine LayerNorm (eps 1e-5); only the
  // implementation choice carries over.
  nlohmann::json o = nlohmann::json::object();
  if (opts.is_object() && opts.contains("impl")) o["impl"] = opts["impl"];
  return make_norm("layernorm", cfg.d_model, o);
}

std::shared_ptr<Module> make_final_norm(const TransformerConfig& cfg, Side side) {
  const bool enc = side == Side::Encoder;
  const std::string name = enc ? cfg.encoder_norm_name() : cfg.decoder_norm_name();
  nlohmann::json opts = enc ? cfg.encoder_norm_opts() : cfg.decoder_norm_opts();
  if (takes(name, "warmup_iters")) opts["warmup_iters"] = cfg.final_norm_warmup_iters;
  return make_norm(name, cfg.d_model, opts);
}

Tensor slot_mask(const Tensor& pad, const Variable& x) {
  if (!pad.defined() || pad.size(1) == x.size(1)) return pad;
  return pad.slice(1, pad.size(1) - x.size(1), pad.size(1)).contiguous();
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

Variable ffn_forward(const std::string& activation, Linear& fc1, Linear& fc2, const Variable& x, double p,
                     bool training) {
  if (activation == "gelu") return fc2(dropout(gelu(fc1(x)), p, training));
  if (fc1.has_forward_hooks() || fc2.has_forward_hooks()) return fc2(dropout(relu(fc1(x)), p, training));
  return ffn_relu(x, fc1.weight, fc1.bias, fc2.weight, fc2.bias, p, training);
}

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
