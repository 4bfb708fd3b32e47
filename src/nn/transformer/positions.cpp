#include "nn/transformer/positions.h"

#include <cmath>
#include <stdexcept>

#include "nn/init.h"

namespace nl {

Tensor make_positions(const Tensor& tokens, int64_t padding_idx) {
  if (!tokens.defined() || tokens.dtype() != DType::Int64 || tokens.dim() != 2)
    throw std::invalid_argument("make_positions: tokens must be int64 [B, T], got " +
                                (tokens.defined() ? dtype_name(tokens.dtype()) + " " + shape_str(tokens.shape())
                                                  : std::string("undefined")));
  const int64_t B = tokens.size(0), T = tokens.size(1);
  // Where the tokens are (no host round trip): count[b, i] = number of non-pad tokens in [0, i], an
  // inclusive prefix sum done in log2(T) shifted adds (Hillis & Steele 1986) on int64; then
  // pos = padding_idx + count on non-pad tokens and padding_idx on pads.
  const Device dev = tokens.device();
  const Tensor pad = Tensor::scalar((double)padding_idx, DType::Int64, dev);
  const Tensor keep = ne(tokens, pad);  // 1 / 0, int64
  Tensor count = keep;
  for (int64_t k = 1; k < T; k *= 2)
    count = add(count, cat(std::vector<Tensor>{Tensor::zeros({B, k}, DType::Int64, dev), count.slice(1, 0, T - k)}, 1));
  return add(mul(count, keep), pad);
}

Tensor sinusoidal_table(int64_t n, int64_t dim, int64_t padding_idx) {
  if (dim < 4 || n < 1)
    throw std::invalid_argument("sinusoidal positions need dim >= 4 and at least one row (got dim " +
                                std::to_string(dim) + ", rows " + std::to_string(n) +
                                "); use learned positions for tiny models");
  const int64_t half = dim / 2;
  const double step = std::log(10000.0) / static_cast<double>(half - 1);
  Tensor t = Tensor::zeros({n, dim}, DType::Float64);
  double* w = t.data<double>();
  for (int64_t p = 0; p < n; ++p) {
    if (p == padding_idx) continue;
    for (int64_t i = 0; i < half; ++i) {
      const double a = static_cast<double>(p) * std::exp(-static_cast<double>(i) * step);
      w[p * dim + i] = std::sin(a);
      w[p * dim + half + i] = std::cos(a);
    }
  }
  return t;
}

SinusoidalPositionalEmbedding::SinusoidalPositionalEmbedding(int64_t max_pos, int64_t d, int64_t pad)
    : Module("SinusoidalPositionalEmbedding"),
      max_positions(max_pos),
      dim(d),
      padding_idx(pad),
      table_(sinusoidal_table(max_pos + pad + 1, d, pad)) {}

Variable SinusoidalPositionalEmbedding::forward(const Tensor& positions, DType dtype) {
  if (!cast_.defined() || cast_.dtype() != dtype || cast_.device() != positions.device())
    cast_ = table_.to(dtype).to(positions.device());
  return Variable(embedding(cast_, positions));
}

std::string SinusoidalPositionalEmbedding::extra_repr() const {
  return "max_positions=" + std::to_string(max_positions) + ", dim=" + std::to_string(dim) +
         ", padding_idx=" + std::to_string(padding_idx);
}

LearnedPositionalEmbedding::LearnedPositionalEmbedding(int64_t max_pos, int64_t d, int64_t pad)
    : Embedding(max_pos + pad + 1, d, pad), max_positions(max_pos) {
  NoGradGuard ng;
  Tensor w = weight.data();
  init::normal_(w, 0.0, std::pow(static_cast<double>(d), -0.5));
  w.select(0, pad).zero_();
}

}  // namespace nl
