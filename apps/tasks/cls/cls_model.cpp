#include "tasks/cls/cls_model.h"

#include <stdexcept>

#include "autograd/functions.h"

namespace nlapp {

nl::Variable masked_mean_pool(const nl::Variable& states, const nl::Tensor& padding_mask) {
  if (states.dim() != 3 || padding_mask.dim() != 2 || padding_mask.size(0) != states.size(0) ||
      padding_mask.size(1) != states.size(1))
    throw std::invalid_argument("masked_mean_pool: states must be [B, T, D] and padding_mask [B, T], got " +
                                nl::shape_str(states.shape()) + " and " + nl::shape_str(padding_mask.shape()));
  const int64_t B = states.size(0), T = states.size(1);
  const std::vector<double> pad = padding_mask.to(nl::DType::Float64).to_vector<double>();
  std::vector<double> keep((size_t)(B * T)), count((size_t)B, 0.0);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) count[(size_t)b] += keep[(size_t)(b * T + t)] = pad[(size_t)(b * T + t)] == 0 ? 1 : 0;
    if (count[(size_t)b] == 0)
      throw std::invalid_argument("masked_mean_pool: row " + std::to_string(b) +
                                  " is all padding; every sentence needs at least one token (</s>)");
  }
  const nl::DType dt = states.dtype();
  nl::Variable w(nl::Tensor::from_vector(keep, {B, T, 1}).to(dt).to(states.device()));
  nl::Variable n(nl::Tensor::from_vector(count, {B, 1}).to(dt).to(states.device()));
  return nl::sum(states * w, {1}) / n;
}

SentenceClassifier::SentenceClassifier(const nl::TransformerConfig& cfg, int64_t num_classes)
    : nl::Module("SentenceClassifier"), dropout_p_(cfg.dropout) {
  if (num_classes < 2)
    throw std::invalid_argument("SentenceClassifier: num_classes must be >= 2, got " + std::to_string(num_classes));
  encoder = register_module("encoder", std::make_shared<nl::TransformerEncoder>(cfg));
  head = register_module("head", nl::transformer_detail::make_xavier_linear(cfg.d_model, num_classes));
  to(cfg.dtype);
}

nl::Variable SentenceClassifier::forward(const nl::Tensor& tokens) {
  nl::EncoderOut e = encoder->forward(tokens);
  return (*head)(nl::dropout(masked_mean_pool(e.out, e.padding_mask), dropout_p_, is_training()));
}

}  // namespace nlapp
