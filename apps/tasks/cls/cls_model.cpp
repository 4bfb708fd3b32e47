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
  const nl::DType dt = states.dtype();
  // Made where the states are (no host round trip): keep = 1 on tokens, 0 on padding; n = tokens per row.
  const nl::Tensor keep = nl::eq(padding_mask.to(nl::DType::Float64), nl::Tensor::scalar(0.0, nl::DType::Float64,
                                                                                          padding_mask.device()));
  nl::Tensor count = nl::sum(keep, {1}).reshape({B, 1});
  if (count.device().is_cpu()) {  // free to check here; on a device an all-padding row divides by 1
    const std::vector<double> c = count.to_vector<double>();
    for (int64_t b = 0; b < B; ++b)
      if (c[(size_t)b] == 0)
        throw std::invalid_argument("masked_mean_pool: row " + std::to_string(b) +
                                    " is all padding; every sentence needs at least one token (</s>)");
  } else {
    count = nl::clamp_min(count, 1.0);
  }
  nl::Variable w(keep.to(dt).reshape({B, T, 1}).to(states.device()));
  nl::Variable n(count.to(dt).to(states.device()));
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
