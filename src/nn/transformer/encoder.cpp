#include "nn/transformer/encoder.h"

#include "nn/norm/masked_norm.h"

namespace nl {

using namespace transformer_detail;

namespace {
const TransformerConfig& checked(const TransformerConfig& cfg) {
  cfg.validate_encoder();
  return cfg;
}
}  // namespace

TransformerEncoder::TransformerEncoder(const TransformerConfig& cfg)
    : TransformerEncoder(cfg, make_token_embedding(checked(cfg).src_vocab, cfg)) {}

TransformerEncoder::TransformerEncoder(const TransformerConfig& cfg, std::shared_ptr<Embedding> embed)
    : TransformerStackBase("TransformerEncoder", checked(cfg), std::move(embed), true, cfg.max_source_positions,
                          Side::Encoder) {
  for (int64_t i = 0; i < cfg.encoder_layers; ++i)
    layer_list.push_back(layers->register_module(std::to_string(i), std::make_shared<TransformerEncoderLayer>(cfg)));
  finish(cfg);
  to(cfg.dtype);
}

EncoderOut TransformerEncoder::forward(const Tensor& src_tokens) {
  check_tokens(src_tokens, max_positions, "source");
  Tensor pad = eq(src_tokens, Tensor::scalar(static_cast<double>(padding_idx), DType::Int64, src_tokens.device()));
  Variable x = embed(src_tokens, make_positions(src_tokens, padding_idx));
  for (auto& layer : layer_list) x = (*layer)(x, pad);
  if (layer_norm) x = norm_forward(*layer_norm, x, pad);
  return {x, pad};
}

}  // namespace nl
