#include "data/text/batching.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "data/text/shuffle.h"

namespace nl::data {

BatchPlan plan_batches(const std::vector<int64_t>& src, const std::vector<int64_t>& tgt,
                       const BatchingOptions& o) {
  if (o.max_tokens <= 0) throw std::invalid_argument("plan_batches: max_tokens must be > 0");
  if (!tgt.empty() && tgt.size() != src.size())
    throw std::invalid_argument("plan_batches: " + std::to_string(src.size()) + " source lengths but " +
                                std::to_string(tgt.size()) + " target lengths");
  const std::size_t n = src.size();
  auto tlen = [&](std::size_t i) { return tgt.empty() ? int64_t{0} : tgt[i]; };
  BatchPlan plan;
  std::vector<int64_t> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    bool too_long = (o.max_source_positions > 0 && src[i] > o.max_source_positions) ||
                    (!tgt.empty() && o.max_target_positions > 0 && tgt[i] > o.max_target_positions);
    if (too_long) plan.dropped.push_back(static_cast<int64_t>(i));
    else order.push_back(static_cast<int64_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    if (src[ua] != src[ub]) return src[ua] < src[ub];
    return tlen(ua) < tlen(ub);
  });
  plan.num_examples_kept = static_cast<int64_t>(order.size());
  std::vector<int64_t> cur;
  int64_t cur_max = 0;
  const int64_t mult = std::max<int64_t>(1, o.required_batch_size_multiple);
  for (int64_t idx : order) {
    auto u = static_cast<std::size_t>(idx);
    int64_t len = std::max(src[u], tlen(u));
    if (len > o.max_tokens)
      throw std::invalid_argument("plan_batches: example " + std::to_string(idx) + " has " + std::to_string(len) +
                                  " tokens, more than max_tokens=" + std::to_string(o.max_tokens) +
                                  "; raise --max-tokens or lower --max-source-positions/--max-target-positions");
    int64_t new_max = std::max(cur_max, len);
    bool full = !cur.empty() && ((static_cast<int64_t>(cur.size()) + 1) * new_max > o.max_tokens ||
                                 (o.max_sentences > 0 && static_cast<int64_t>(cur.size()) >= o.max_sentences));
    if (full) {
      // fairseq: keep the largest multiple of required_batch_size_multiple, carry the rest over.
      std::size_t keep = cur.size();
      if (mult > 1 && cur.size() >= static_cast<std::size_t>(mult)) keep = cur.size() - cur.size() % mult;
      plan.batches.emplace_back(cur.begin(), cur.begin() + static_cast<std::ptrdiff_t>(keep));
      cur.erase(cur.begin(), cur.begin() + static_cast<std::ptrdiff_t>(keep));
      cur_max = 0;
      for (int64_t j : cur) cur_max = std::max({cur_max, src[static_cast<std::size_t>(j)], tlen(static_cast<std::size_t>(j))});
      new_max = std::max(cur_max, len);
    }
    cur.push_back(idx);
    cur_max = new_max;
  }
  if (!cur.empty()) plan.batches.push_back(std::move(cur));
  return plan;
}

std::vector<std::vector<int64_t>> shuffled_batches(const BatchPlan& plan, uint64_t seed, int64_t epoch) {
  auto perm = seeded_permutation(static_cast<int64_t>(plan.batches.size()), seed + static_cast<uint64_t>(epoch));
  std::vector<std::vector<int64_t>> out;
  out.reserve(perm.size());
  for (int64_t p : perm) out.push_back(plan.batches[static_cast<std::size_t>(p)]);
  return out;
}

TokenBatch collate_tokens(const std::vector<std::span<const int32_t>>& seqs, int32_t pad, bool left_pad,
                          bool move_eos_to_beginning, int32_t eos) {
  TokenBatch b;
  b.batch_size = static_cast<int64_t>(seqs.size());
  for (const auto& s : seqs) b.max_len = std::max<int64_t>(b.max_len, static_cast<int64_t>(s.size()));
  b.ids.assign(static_cast<std::size_t>(b.batch_size * b.max_len), pad);
  for (std::size_t r = 0; r < seqs.size(); ++r) {
    const auto& s = seqs[r];
    const auto len = static_cast<int64_t>(s.size());
    b.lengths.push_back(len);
    int64_t* row = b.ids.data() + static_cast<int64_t>(r) * b.max_len + (left_pad ? b.max_len - len : 0);
    if (move_eos_to_beginning && len > 0) {
      if (s.back() != eos)
        throw std::invalid_argument("collate_tokens: sequence " + std::to_string(r) +
                                    " does not end with eos; cannot build prev_output_tokens");
      row[0] = eos;
      for (int64_t k = 0; k + 1 < len; ++k) row[k + 1] = s[static_cast<std::size_t>(k)];
    } else {
      for (int64_t k = 0; k < len; ++k) row[k] = s[static_cast<std::size_t>(k)];
    }
  }
  return b;
}

std::vector<LmBlock> make_lm_blocks(int64_t num_tokens, int64_t tokens_per_sample) {
  if (tokens_per_sample <= 0) throw std::invalid_argument("make_lm_blocks: tokens_per_sample must be > 0");
  std::vector<LmBlock> out;
  const int64_t inputs = num_tokens - 1;  // the last token has no successor
  for (int64_t s = 0; s < inputs; s += tokens_per_sample)
    out.push_back({s, std::min(tokens_per_sample, inputs - s)});
  return out;
}

LmBatch collate_lm_blocks(std::span<const int32_t> stream, const std::vector<LmBlock>& blocks,
                          const std::vector<int64_t>& block_ids, int32_t pad) {
  std::vector<std::span<const int32_t>> src, tgt;
  for (int64_t id : block_ids) {
    const auto& bl = blocks.at(static_cast<std::size_t>(id));
    if (bl.start + bl.length + 1 > static_cast<int64_t>(stream.size()))
      throw std::out_of_range("collate_lm_blocks: block " + std::to_string(id) + " exceeds the stream");
    src.push_back(stream.subspan(static_cast<std::size_t>(bl.start), static_cast<std::size_t>(bl.length)));
    tgt.push_back(stream.subspan(static_cast<std::size_t>(bl.start + 1), static_cast<std::size_t>(bl.length)));
  }
  return {collate_tokens(src, pad, false), collate_tokens(tgt, pad, false)};
}

}  // namespace nl::data
