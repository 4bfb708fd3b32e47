#include "nn/models/parser_mlp.h"

#include <stdexcept>

#include "data/text/parser_features.h"
#include "nn/norm/factory.h"

namespace nl {

ParserMlp::ParserMlp(const ParserMlpConfig& cfg) : Module("ParserMlp"), cfg_(cfg) {
  if (cfg.words < 1 || cfg.tags < 1 || cfg.labels < 1 || cfg.classes < 1 || cfg.embed_dim < 1 || cfg.hidden < 1)
    throw std::invalid_argument("ParserMlp: vocabulary sizes, classes, embed_dim and hidden must all be >= 1");
  if (cfg.activation != "cube" && cfg.activation != "relu")
    throw std::invalid_argument("ParserMlp: unknown activation '" + cfg.activation + "'; use cube or relu");
  word_embed_ = register_module("word_embed", std::make_shared<Embedding>(cfg.words, cfg.embed_dim));
  tag_embed_ = register_module("tag_embed", std::make_shared<Embedding>(cfg.tags, cfg.embed_dim));
  label_embed_ = register_module("label_embed", std::make_shared<Embedding>(cfg.labels, cfg.embed_dim));
  fc1_ = register_module("fc1", std::make_shared<Linear>(data::kParseFeatures * cfg.embed_dim, cfg.hidden));
  norm_ = register_module("norm", make_norm(cfg.norm, cfg.hidden, cfg.norm_opts));
  drop_ = register_module("dropout", std::make_shared<Dropout>(cfg.dropout));
  fc2_ = register_module("fc2", std::make_shared<Linear>(cfg.hidden, cfg.classes));
}

Variable ParserMlp::forward(const Variable& ids) {
  if (ids.dim() != 2 || ids.size(1) != data::kParseFeatures || ids.dtype() != DType::Int64)
    throw std::invalid_argument("ParserMlp: input must be int64 [B, 48] feature ids, got " + shape_str(ids.shape()));
  const int64_t B = ids.size(0), W = data::kParseWordFeatures, P = data::kParsePosFeatures;
  const Tensor& t = ids.data();
  Variable w = (*word_embed_)(t.slice(1, 0, W).contiguous());
  Variable p = (*tag_embed_)(t.slice(1, W, W + P).contiguous());
  Variable l = (*label_embed_)(t.slice(1, W + P, data::kParseFeatures).contiguous());
  Variable x = cat({reshape(w, {B, -1}), reshape(p, {B, -1}), reshape(l, {B, -1})}, 1);
  Variable h = (*norm_)((*fc1_)(x));
  h = cfg_.activation == "cube" ? h * h * h : relu(h);
  return (*fc2_)((*drop_)(h));
}

}  // namespace nl
