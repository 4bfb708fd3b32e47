#pragma once
// Token-based batching as in fairseq (data_utils.batch_by_size, LanguagePairDataset.collater,
// TokenBlockDataset): examples are ordered by length, packed greedily so that
// batch_size * (longest example in the batch, padding included) <= max_tokens, the batches are shuffled
// per epoch with a fixed seed, and collated into [B, T] row-major id arrays with left or right padding.
#include <cstdint>
#include <span>
#include <vector>

namespace nl::data {

/// Options of plan_batches (fairseq's flag names).
struct BatchingOptions {
  int64_t max_tokens = 4096;             ///< bound on B * T_max (padding counts); > 0
  int64_t max_sentences = 0;             ///< bound on B (0 = none), fairseq --batch-size
  int64_t max_source_positions = 1024;   ///< examples with a longer source are dropped (0 = no limit)
  int64_t max_target_positions = 1024;   ///< examples with a longer target are dropped (0 = no limit)
  int64_t required_batch_size_multiple = 1;  ///< B is a multiple of this unless the batch is the last
};

/// Result of plan_batches: each batch lists example indices (into the length arrays).
struct BatchPlan {
  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> dropped;  ///< indices filtered out by max_*_positions, ascending
  int64_t num_examples_kept = 0;
};

/// Orders examples by (source length, target length, index) ascending (fairseq's ordered_indices without
/// the random tie-break), drops those longer than the position limits, and packs them greedily: an
/// example joins the current batch while (B + 1) * max(T_max, its length) <= max_tokens and B < max_sentences.
/// The length of an example is max(source, target); `tgt_lengths` may be empty (monolingual data).
/// Throws std::invalid_argument if an example kept by the filter alone exceeds max_tokens (raise
/// --max-tokens or lower --max-source-positions), if max_tokens <= 0, or if the length arrays differ in size.
BatchPlan plan_batches(const std::vector<int64_t>& src_lengths, const std::vector<int64_t>& tgt_lengths,
                       const BatchingOptions& opts);

/// The batches of `plan` in the order of epoch `epoch` (1-based as in fairseq): a Fisher-Yates
/// permutation driven by std::mt19937_64(seed + epoch) (see shuffle.h). The same seed and epoch always give
/// the same order; the contents of each batch are unchanged.
std::vector<std::vector<int64_t>> shuffled_batches(const BatchPlan& plan, uint64_t seed, int64_t epoch);

/// A padded batch of token ids: `ids` is [batch_size, max_len] row-major, int64 for embedding lookups.
struct TokenBatch {
  int64_t batch_size = 0;
  int64_t max_len = 0;
  std::vector<int64_t> ids;      ///< batch_size * max_len ids
  std::vector<int64_t> lengths;  ///< unpadded length of each row
};

/// Pads `seqs` to their longest length with `pad` (fairseq data_utils.collate_tokens): right padding by
/// default, left padding (pad first, tokens right-aligned) when `left_pad`. With `move_eos_to_beginning`
/// each sequence, which must end with `eos`, is rotated so that eos comes first (decoder input,
/// prev_output_tokens). Throws std::invalid_argument for that option on a sequence not ending in eos.
TokenBatch collate_tokens(const std::vector<std::span<const int32_t>>& seqs, int32_t pad, bool left_pad,
                          bool move_eos_to_beginning = false, int32_t eos = 2);

/// Start and length of one language-model block in the token stream.
struct LmBlock {
  int64_t start = 0;
  int64_t length = 0;
};

/// Cuts a stream of `num_tokens` tokens into blocks of `tokens_per_sample` inputs (fairseq
/// TokenBlockDataset, break mode "none"). Block k covers inputs [k*T, min((k+1)*T, num_tokens-1)); its
/// targets are the same positions + 1, so the last token is only a target. The last block may be
/// shorter. Throws std::invalid_argument if tokens_per_sample <= 0.
std::vector<LmBlock> make_lm_blocks(int64_t num_tokens, int64_t tokens_per_sample);

/// Inputs and next-token targets of a batch of LM blocks, both [B, T] row-major, right-padded with `pad`.
struct LmBatch {
  TokenBatch source;
  TokenBatch target;
};

/// Collates the blocks `block_ids` of `blocks` over `stream` into an LmBatch.
LmBatch collate_lm_blocks(std::span<const int32_t> stream, const std::vector<LmBlock>& blocks,
                          const std::vector<int64_t>& block_ids, int32_t pad);

}  // namespace nl::data
