#pragma once
// How the `lm` task cuts an id stream into segments (Transformer-XL's LMOrderedIterator): the stream
// is laid out as `rows` contiguous pieces, one per batch row, and segment s of an epoch is the columns
// [s T, (s+1) T) of every row, so that row b of segment s + 1 continues row b of segment s and the
// memory of one segment is the context of the next. Inputs are stream[i], targets stream[i + 1].
#include <cstdint>
#include <vector>

#include "engine/task.h"
#include "tensor/tensor.h"

namespace nlapp {

/// Target id of a padded position (ignored by the loss and the scores; nl::cross_entropy's default).
inline constexpr int64_t kLmIgnore = -100;

/// input/target pairs laid out as [rows, cols], row-major.
struct LmGrid {
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> input, target;  ///< target kLmIgnore = padding (its input is 0)
};

/// Training layout (the code's batchify): the n - 1 pairs of the stream in `rows` rows of
/// floor((n - 1) / rows) columns; the remainder is dropped. Throws std::invalid_argument when the
/// stream has fewer than `rows` + 1 tokens (naming --batch-size).
LmGrid train_grid(const std::vector<int32_t>& stream, int64_t rows);

/// Evaluation layout that scores every token but the first exactly once: the n - 1 pairs in rows of
/// L = ceil((n - 1) / rows) columns (fewer rows when the stream is short); the last row is padded at
/// its end. Throws std::invalid_argument on a stream of fewer than 2 tokens.
LmGrid eval_grid(const std::vector<int32_t>& stream, int64_t rows);

/// One segment: tokens and targets [rows, len] int64 and the padding mask [rows, len] (1 = padding, or
/// undefined when there is none). items = non-padding targets.
struct LmBatch : TaskBatch {
  nl::Tensor tokens, targets, pad_mask;
  std::vector<nl::Tensor*> tensors() override { return {&tokens, &targets, &pad_mask}; }
  uint64_t epoch = 0;
  int64_t index = 0;  ///< the segment's index in its epoch (-1: a bench batch that always keeps memory)
};

/// Columns [start, start + len) of the grid (len clipped to the grid). Throws std::invalid_argument
/// on start outside [0, cols).
LmBatch grid_segment(const LmGrid& g, int64_t start, int64_t len);

/// The scores of a summed negative log-likelihood `nll_sum` (nats) over `tokens` scored tokens:
/// loss = nll_sum / tokens (nats per token), ppl = exp(loss), bpc = loss / ln 2 (bits per character;
/// for words, bits per word). Throws std::invalid_argument when tokens < 1.
Metrics lm_scores(double nll_sum, int64_t tokens);

}  // namespace nlapp
