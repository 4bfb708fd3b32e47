#pragma once
// Token-bounded batches of a translation split (fairseq's LanguagePairDataset + batch_by_size):
// source [B, S] and decoder input / target [B, T], right-padded with <pad>.
#include <cstdint>
#include <memory>
#include <vector>

#include "data/text/batching.h"
#include "engine/task.h"
#include "tasks/mt/mt_corpus.h"
#include "tensor/tensor.h"

namespace nlapp {

/// One translation batch. `items` = target tokens (</s> included, padding excluded).
struct MtBatch : TaskBatch {
  nl::Tensor src;     ///< [B, S] int64 source ids ending in </s>
  nl::Tensor prev;    ///< [B, T] int64 decoder input: </s> then the target without its last token
  nl::Tensor target;  ///< [B, T] int64 target ids ending in </s>
  std::vector<int64_t> ids;  ///< sentence indices in the split
  std::vector<nl::Tensor*> tensors() override { return {&src, &prev, &target}; }
};

/// Builds MtBatch es of `split` (indices into its sentences).
MtBatch collate_mt(const MtSplit& split, const std::vector<int64_t>& ids);

/// The batch plan of a split: sentences ordered by length and packed under max_tokens
/// (nl::data::plan_batches). Throws std::invalid_argument (from plan_batches) when one sentence alone
/// exceeds max_tokens.
nl::data::BatchPlan plan_mt_batches(const MtSplit& split, int64_t max_tokens, int64_t max_source_positions,
                                    int64_t max_target_positions);

}  // namespace nlapp
