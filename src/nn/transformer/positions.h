#pragma once
// Position embeddings as fairseq builds them (fairseq/modules/sinusoidal_positional_embedding.py,
// learned_positional_embedding.py, fairseq/utils.py make_positions). Positions count non-padding tokens
// from padding_idx + 1; padding tokens get position padding_idx, whose embedding is zero. So left- and
// right-padded batches give every token the same position.
#include "nn/embedding.h"

namespace nl {

/// fairseq's make_positions: tokens int64 [B, T] -> int64 [B, T] with
/// pos[b, t] = padding_idx + (number of non-pad tokens in tokens[b, 0..t]) for non-pad tokens and
/// padding_idx for pad tokens. Throws std::invalid_argument unless tokens is int64 [B, T].
Tensor make_positions(const Tensor& tokens, int64_t padding_idx);

/// The table of fairseq's SinusoidalPositionalEmbedding.get_embedding, [num_embeddings, dim] float64:
/// with half = dim / 2 and f_i = exp(-i * ln(10000) / (half - 1)), row p is
/// [sin(p f_0) .. sin(p f_{half-1}), cos(p f_0) .. cos(p f_{half-1})] (a zero column appended for odd
/// dim) and row padding_idx is zero (Vaswani et al. 2017, Sec. 3.5, in fairseq's half/half layout).
/// Throws std::invalid_argument when dim < 4 (half - 1 would be 0) or num_embeddings < 1.
Tensor sinusoidal_table(int64_t num_embeddings, int64_t dim, int64_t padding_idx);

/// Fixed sinusoidal positions (no parameters, nothing in state_dict, as fairseq).
/// positions int64 [B, T] (from make_positions) -> [B, T, dim] in `dtype`.
class SinusoidalPositionalEmbedding : public Module {
 public:
  /// Serves positions up to max_positions + padding_idx (sequences of up to max_positions tokens).
  SinusoidalPositionalEmbedding(int64_t max_positions, int64_t dim, int64_t padding_idx);
  Variable forward(const Tensor& positions, DType dtype);
  std::string extra_repr() const override;
  int64_t max_positions, dim, padding_idx;

 private:
  Tensor table_;  // float64 [max_positions + padding_idx + 1, dim]
  Tensor cast_;   // table_ in the last requested dtype, on the last positions' device
};

/// Learned positions (fairseq LearnedPositionalEmbedding): an Embedding with
/// max_positions + padding_idx + 1 rows, init N(0, dim^-0.5) with a zero padding row (fairseq's
/// PositionalEmbedding). positions int64 [B, T] -> [B, T, dim].
class LearnedPositionalEmbedding : public Embedding {
 public:
  LearnedPositionalEmbedding(int64_t max_positions, int64_t dim, int64_t padding_idx);
  int64_t max_positions;
};

}  // namespace nl
