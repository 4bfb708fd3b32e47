#include "nn/transformer/decoder.h"

#include <cmath>
#include <stdexcept>

#include "nn/init.h"
#include "nn/norm/masked_norm.h"

namespace nl {

using namespace transformer_detail;

TransformerDecoder::TransformerDecoder(const TransformerConfig& cfg, std::shared_ptr<Embedding> embed, bool own_embed)
    : TransformerStackBase("TransformerDecoder", cfg, std::move(embed), own_embed, cfg.max_target_positions,
                          Side::Decoder) {
  for (int64_t i = 0; i < cfg.decoder_layers; ++i)
    layer_list.push_back(layers->register_module(std::to_string(i), std::make_shared<TransformerDecoderLayer>(cfg)));
  std::shared_ptr<Linear> proj;
  if (cfg.share_decoder_input_output_embed || cfg.share_all_embeddings) {
    output_weight = embed_tokens->weight;
  } else {
    proj = std::make_shared<Linear>(cfg.d_model, cfg.tgt_vocab, false);
    NoGradGuard ng;
    Tensor w = proj->weight.data();
    init::normal_(w, 0.0, std::pow(static_cast<double>(cfg.d_model), -0.5));
    output_weight = proj->weight;
  }
  finish(cfg);
  if (proj) register_module("output_projection", proj);
  to(cfg.dtype);
}

Variable TransformerDecoder::forward(const Tensor& prev, const EncoderOut& enc, IncrementalState* state) {
  check_tokens(prev, max_positions, "target");
  const int64_t B = prev.size(0), T = prev.size(1), L = static_cast<int64_t>(layer_list.size());
  if (!enc.out.defined() || enc.out.dim() != 3 || enc.out.size(0) != B)
    throw std::invalid_argument("TransformerDecoder: encoder output must be [B, S, D] with B = " + std::to_string(B) +
                                " (got " + (enc.out.defined() ? shape_str(enc.out.shape()) : "undefined") +
                                "); after reordering tokens, reorder the EncoderOut too (index_select)");
  Tensor positions = make_positions(prev, padding_idx);
  Tensor self_pad = eq(prev, Tensor::scalar(static_cast<double>(padding_idx), DType::Int64, prev.device()));
  Tensor tokens = prev;
  if (state) {
    if (state->steps() != T - 1)
      throw std::invalid_argument("incremental decode: the state holds " + std::to_string(state->steps()) +
                                  " steps but prev_output_tokens has " + std::to_string(T) +
                                  " tokens; pass every token decoded so far (one more per call) with a fresh "
                                  "IncrementalState per sentence batch");
    if (state->entries.empty()) state->entries.resize(static_cast<size_t>(2 * L));
    if (state->entries.size() != static_cast<size_t>(2 * L))
      throw std::invalid_argument("incremental decode: the state has " + std::to_string(state->entries.size()) +
                                  " attention caches but this decoder needs " + std::to_string(2 * L) +
                                  " (2 per layer); use one IncrementalState per model");
    tokens = prev.slice(1, T - 1, T).contiguous();
    positions = positions.slice(1, T - 1, T).contiguous();
  }
  Variable x = embed(tokens, positions);
  for (int64_t i = 0; i < L; ++i) {
    IncrementalState::Entry* self_cache = state ? &state->entries[static_cast<size_t>(2 * i)] : nullptr;
    IncrementalState::Entry* enc_cache = state ? &state->entries[static_cast<size_t>(2 * i + 1)] : nullptr;
    x = (*layer_list[static_cast<size_t>(i)])(x, enc.out, enc.padding_mask, self_pad, self_cache, enc_cache);
  }
  if (layer_norm) x = norm_forward(*layer_norm, x, slot_mask(self_pad, x));
  if (state) ++state->steps_;
  return linear(x, output_weight, Variable(), /*autocast_output=*/true);  // bfloat16 logits under autocast
}

}  // namespace nl
