#include "tasks/mt/mt_batches.h"

#include <span>

namespace nlapp {

MtBatch collate_mt(const MtSplit& split, const std::vector<int64_t>& ids) {
  using nl::data::Dictionary;
  std::vector<std::span<const int32_t>> src, tgt;
  for (int64_t i : ids) {
    src.push_back((*split.src)[i]);
    tgt.push_back((*split.tgt)[i]);
  }
  auto s = nl::data::collate_tokens(src, Dictionary::kPad, false);
  auto t = nl::data::collate_tokens(tgt, Dictionary::kPad, false);
  auto p = nl::data::collate_tokens(tgt, Dictionary::kPad, false, /*move_eos_to_beginning=*/true, Dictionary::kEos);
  MtBatch b;
  b.src = nl::Tensor::from_vector(s.ids, {s.batch_size, s.max_len});
  b.target = nl::Tensor::from_vector(t.ids, {t.batch_size, t.max_len});
  b.prev = nl::Tensor::from_vector(p.ids, {p.batch_size, p.max_len});
  b.ids = ids;
  for (int64_t l : t.lengths) b.items += l;
  return b;
}

nl::data::BatchPlan plan_mt_batches(const MtSplit& split, int64_t max_tokens, int64_t max_source_positions,
                                    int64_t max_target_positions) {
  nl::data::BatchingOptions o;
  o.max_tokens = max_tokens;
  o.max_source_positions = max_source_positions;
  o.max_target_positions = max_target_positions;
  return nl::data::plan_batches(split.src->lengths(), split.tgt->lengths(), o);
}

}  // namespace nlapp
