#include "nn/embedding.h"

#include "nn/init.h"

namespace nl {

Embedding::Embedding(int64_t V, int64_t D, int64_t pad, DType dtype)
    : Module("Embedding"), num_embeddings(V), embedding_dim(D), padding_idx(pad) {
  if (V < 1 || D < 1 || pad < -1 || pad >= V)
    throw std::invalid_argument("Embedding: need V, D >= 1 and padding_idx in [-1, V), got V=" + std::to_string(V) +
                                " D=" + std::to_string(D) + " padding_idx=" + std::to_string(pad));
  Tensor w = Tensor::empty({V, D}, dtype);
  init::normal_(w, 0.0, 1.0);
  if (pad >= 0) w.select(0, pad).zero_();
  weight = register_parameter("weight", w);
}

Variable Embedding::forward(const Tensor& ids) {
  if (ids.dtype() != DType::Int64)
    throw std::invalid_argument("Embedding: ids must be int64, got " + dtype_name(ids.dtype()));
  if (padding_idx < 0) return embedding(weight, ids);
  // Like torch, the padding row gets no gradient: outputs at padding positions are masked (to the pad
  // row's initial value, zero), and masked_fill sends no gradient through masked entries.
  Tensor is_pad = nl::eq(ids, Tensor::scalar((double)padding_idx, DType::Int64, ids.device()));
  Variable out = embedding(weight, ids);
  Tensor mask = is_pad.to(weight.dtype()).unsqueeze(-1);  // [*, 1]: 1 at padding positions
  return masked_fill(out, mask, 0.0);
}

std::string Embedding::extra_repr() const {
  return "num_embeddings=" + std::to_string(num_embeddings) + ", dim=" + std::to_string(embedding_dim) +
         (padding_idx >= 0 ? ", padding_idx=" + std::to_string(padding_idx) : "");
}

}  // namespace nl
