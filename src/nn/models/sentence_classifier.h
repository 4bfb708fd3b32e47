#pragma once
// The sentence classifier of Xu et al. 2019, appendix A.3: a Transformer encoder (TransformerEncoder,
// pre-norm in the paper), the mean of its final states over the non-padding positions, dropout, and a
// linear layer to the classes (the same head as bench/fairseq_transformer.py TransformerClassifier).
#include <memory>

#include "nn/linear.h"
#include "nn/transformer/encoder.h"

namespace nl {

/// Mean over the non-padding positions: states [B, T, D], padding_mask [B, T] (!= 0 = pad) -> [B, D].
/// Throws std::invalid_argument on mismatched shapes or a row that is all padding.
Variable masked_mean_pool(const Variable& states, const Tensor& padding_mask);

/// See the file comment. Children: "encoder" (fairseq names inside) and "head" (Linear D -> classes,
/// xavier_uniform weight, zero bias).
class SentenceClassifier : public Module {
 public:
  /// Throws std::invalid_argument from cfg.validate_encoder() or when num_classes < 2.
  SentenceClassifier(const TransformerConfig& cfg, int64_t num_classes);
  /// tokens int64 [B, T], right-padded with cfg.padding_idx -> logits [B, num_classes].
  Variable forward(const Tensor& tokens);
  std::shared_ptr<TransformerEncoder> encoder;
  std::shared_ptr<Linear> head;

 private:
  double dropout_p_;
};

}  // namespace nl
