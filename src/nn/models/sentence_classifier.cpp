#include "nn/models/sentence_classifier.h"

#include <stdexcept>

#include "autograd/functions.h"

namespace nl {

Variable masked_mean_pool(const Variable& states, const Tensor& padding_mask) {
  if (states.dim() != 3 || padding_mask.dim() != 2 || padding_mask.size(0) != states.size(0) ||
      padding_mask.size(1) != states.size(1))
    throw std::invalid_argument("masked_mean_pool: states must be [B, T, D] and padding_mask [B, T], got " +
                                shape_str(states.shape()) + " and " + shape_str(padding_mask.shape()));
  const int64_t B = states.size(0), T = states.size(1);
  const DType dt = states.dtype();
  // Made where the states are (no host round trip): keep = 1 on tokens, 0 on padding; n = tokens per row.
  const Tensor keep = eq(padding_mask.to(DType::Float64), Tensor::scalar(0.0, DType::Float64,
                                                                                          padding_mask.device()));
  Tensor count = sum(keep, {1}).reshape({B, 1});
  if (count.device().is_cpu()) {  // free to check here; on a device an all-padding row divides by 1
    const std::vector<double> c = count.to_vector<double>();
    for (int64_t b = 0; b < B; ++b)
      if (c[(size_t)b] == 0)
        throw std::invalid_argument("masked_mean_pool: row " + std::to_string(b) +
                                    " is all padding; every sentence needs at least one token (</s>)");
  } else {
    count = clamp_min(count, 1.0);
  }
  Variable w(keep.to(dt).reshape({B, T, 1}).to(states.device()));
  Variable n(count.to(dt).to(states.device()));
  return sum(states * w, {1}) / n;
}

SentenceClassifier::SentenceClassifier(const TransformerConfig& cfg, int64_t num_classes)
    : Module("SentenceClassifier"), dropout_p_(cfg.dropout) {
  if (num_classes < 2)
    throw std::invalid_argument("SentenceClassifier: num_classes must be >= 2, got " + std::to_string(num_classes));
  encoder = register_module("encoder", std::make_shared<TransformerEncoder>(cfg));
  head = register_module("head", transformer_detail::make_xavier_linear(cfg.d_model, num_classes));
  to(cfg.dtype);
}

Variable SentenceClassifier::forward(const Tensor& tokens) {
  EncoderOut e = encoder->forward(tokens);
  return (*head)(dropout(masked_mean_pool(e.out, e.padding_mask), dropout_p_, is_training()));
}

}  // namespace nl
