#pragma once
// Embedding table, as torch.nn.Embedding.
#include "nn/module.h"

namespace nl {

/// ids int64 [*] -> vectors [*, D] (rows of weight [V, D]). Repeated ids accumulate gradient.
/// Init as torch: weight ~ N(0, 1); the padding_idx row (if >= 0) is zero and, as in torch, receives
/// no gradient. Throws std::invalid_argument on V or D < 1 or padding_idx outside [-1, V), and (from
/// the backend) on an id outside [0, V).
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, int64_t padding_idx = -1, DType dtype = DType::Float32);
  /// Looks up int64 `ids`.
  Variable forward(const Tensor& ids);
  /// Same, for ids wrapped in a Variable (int64).
  Variable forward(const Variable& ids) override { return forward(ids.data()); }
  Variable operator()(const Tensor& ids) { return forward(ids); }
  using Module::operator();
  std::string extra_repr() const override;
  Variable weight;
  int64_t num_embeddings, embedding_dim, padding_idx;
};

}  // namespace nl
