#include "nn/transformer/transformer.h"

namespace nl {

using namespace transformer_detail;

namespace {
const TransformerConfig& checked(const TransformerConfig& cfg) {
  cfg.validate();
  return cfg;
}
}  // namespace

TransformerModel::TransformerModel(const TransformerConfig& c) : Module("TransformerModel"), cfg_(checked(c)) {
  auto src_embed = make_token_embedding(cfg_.src_vocab, cfg_);
  encoder = register_module("encoder", std::make_shared<TransformerEncoder>(cfg_, src_embed));
  const bool shared = cfg_.share_all_embeddings;
  auto tgt_embed = shared ? src_embed : make_token_embedding(cfg_.tgt_vocab, cfg_);
  decoder = register_module("decoder", std::make_shared<TransformerDecoder>(cfg_, tgt_embed, !shared));
}

Variable TransformerModel::forward(const Tensor& src_tokens, const Tensor& prev_output_tokens) {
  return decode(prev_output_tokens, encode(src_tokens));
}

EncoderOut TransformerModel::encode(const Tensor& src_tokens) { return encoder->forward(src_tokens); }

Variable TransformerModel::decode(const Tensor& prev_output_tokens, const EncoderOut& enc, IncrementalState* state) {
  return decoder->forward(prev_output_tokens, enc, state);
}

}  // namespace nl
