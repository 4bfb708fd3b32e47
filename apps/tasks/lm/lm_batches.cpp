#include "tasks/lm/lm_batches.h"

#include <cmath>
#include <stdexcept>

namespace nlapp {

LmGrid train_grid(const std::vector<int32_t>& s, int64_t rows) {
  const int64_t pairs = (int64_t)s.size() - 1;
  if (rows < 1 || pairs < rows)
    throw std::invalid_argument("lm: the training stream has " + std::to_string(s.size()) + " tokens, too few for " +
                                std::to_string(rows) + " rows: lower --batch-size");
  LmGrid g;
  g.rows = rows;
  g.cols = pairs / rows;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < g.cols; ++c) {
      const size_t i = (size_t)(r * g.cols + c);
      g.input.push_back(s[i]);
      g.target.push_back(s[i + 1]);
    }
  return g;
}

LmGrid eval_grid(const std::vector<int32_t>& s, int64_t rows) {
  const int64_t pairs = (int64_t)s.size() - 1;
  if (pairs < 1 || rows < 1)
    throw std::invalid_argument("lm: an evaluation split needs at least 2 tokens and 1 row, got " +
                                std::to_string(s.size()) + " tokens");
  LmGrid g;
  g.cols = (pairs + rows - 1) / rows;
  g.rows = (pairs + g.cols - 1) / g.cols;
  g.input.assign((size_t)(g.rows * g.cols), 0);
  g.target.assign((size_t)(g.rows * g.cols), kLmIgnore);
  for (int64_t i = 0; i < pairs; ++i) {
    g.input[(size_t)i] = s[(size_t)i];
    g.target[(size_t)i] = s[(size_t)i + 1];
  }
  return g;
}

LmBatch grid_segment(const LmGrid& g, int64_t start, int64_t len) {
  if (start < 0 || start >= g.cols || len < 1)
    throw std::invalid_argument("lm: segment start " + std::to_string(start) + " outside the grid's " +
                                std::to_string(g.cols) + " columns");
  const int64_t T = std::min(len, g.cols - start);
  std::vector<int64_t> in((size_t)(g.rows * T)), tgt((size_t)(g.rows * T)), pad((size_t)(g.rows * T));
  LmBatch b;
  bool any_pad = false;
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t t = 0; t < T; ++t) {
      const size_t src = (size_t)(r * g.cols + start + t), dst = (size_t)(r * T + t);
      in[dst] = g.input[src];
      tgt[dst] = g.target[src];
      pad[dst] = tgt[dst] == kLmIgnore ? 1 : 0;
      any_pad |= pad[dst] != 0;
      b.items += 1 - pad[dst];
    }
  b.tokens = nl::Tensor::from_vector(in, {g.rows, T});
  b.targets = nl::Tensor::from_vector(tgt, {g.rows, T});
  if (any_pad) b.pad_mask = nl::Tensor::from_vector(pad, {g.rows, T});
  return b;
}

Metrics lm_scores(double nll_sum, int64_t tokens) {
  if (tokens < 1) throw std::invalid_argument("lm_scores: no scored tokens");
  const double loss = nll_sum / (double)tokens;
  return {{"loss", loss}, {"ppl", std::exp(loss)}, {"bpc", loss / std::log(2.0)}};
}

}  // namespace nlapp
