#include "nn/transformer/stack.h"

#include <cmath>

namespace nl {

TransformerStackBase::TransformerStackBase(std::string type_name, const TransformerConfig& cfg,
                                           std::shared_ptr<Embedding> embed, bool own_embed, int64_t max_pos,
                                           transformer_detail::Side side)
    : Module(std::move(type_name)),
      embed_tokens(std::move(embed)),
      layers(std::make_shared<Module>("ModuleList")),
      embed_scale(cfg.no_scale_embedding ? 1.0 : std::sqrt(static_cast<double>(cfg.d_model))),
      padding_idx(cfg.padding_idx),
      max_positions(max_pos),
      dropout_p(cfg.dropout),
      side_(side) {
  if (own_embed) register_module("embed_tokens", embed_tokens);
  if (cfg.learned_pos)
    learned_positions =
        register_module("embed_positions", std::make_shared<LearnedPositionalEmbedding>(max_pos, cfg.d_model, padding_idx));
  else
    sinusoidal_positions = register_module(
        "embed_positions", std::make_shared<SinusoidalPositionalEmbedding>(max_pos, cfg.d_model, padding_idx));
}

void TransformerStackBase::finish(const TransformerConfig& cfg) {
  register_module("layers", layers);
  if (cfg.normalize_before) layer_norm = register_module("layer_norm", transformer_detail::make_final_norm(cfg, side_));
}

Variable TransformerStackBase::embed(const Tensor& tokens, const Tensor& positions) {
  Variable x = (*embed_tokens)(tokens);
  if (embed_scale != 1.0) x = x * embed_scale;
  x = x + (learned_positions ? (*learned_positions)(positions) : sinusoidal_positions->forward(positions, x.dtype()));
  return dropout(x, dropout_p, is_training());
}

}  // namespace nl
