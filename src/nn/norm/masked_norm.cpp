// MaskedNorm, norm_forward and the row layout shared by the batch-statistic and grouped norms
// (see masked_norm.h).
#include "nn/norm/masked_norm.h"
#include "nn/norm/stats_sync.h"

#include <stdexcept>

namespace nl {

Variable MaskedNorm::operator()(const Variable& x, const Tensor& pad_mask) {
  Variable y = forward_masked(x, pad_mask);
  run_forward_hooks({x}, y);
  return y;
}

int MaskedNorm::register_batch_stats_hook(BatchStatsHook hook) {
  stats_hooks_.emplace_back(next_stats_hook_, std::move(hook));
  return next_stats_hook_++;
}

void MaskedNorm::remove_batch_stats_hook(int handle) {
  for (auto it = stats_hooks_.begin(); it != stats_hooks_.end(); ++it)
    if (it->first == handle) {
      stats_hooks_.erase(it);
      return;
    }
}

void MaskedNorm::run_batch_stats_hooks(const BatchStats& stats) {
  for (auto& [h, fn] : stats_hooks_) fn(*this, stats);
}

Variable norm_forward(Module& norm, const Variable& x, const Tensor& pad_mask) {
  if (auto* m = dynamic_cast<MaskedNorm*>(&norm)) return (*m)(x, pad_mask);
  return norm(x);
}

bool uses_batch_statistics(const Module& norm) { return dynamic_cast<const MaskedNorm*>(&norm) != nullptr; }

Rows to_rows(const Variable& x, int64_t d, const std::string& who) {
  Rows r;
  r.shape = x.shape();
  const int64_t n = x.dim();
  if ((n == 2 || n == 3) && x.size(-1) == d) {
    r.rows = reshape(x, {x.numel() / d, d});
    return r;
  }
  if (n == 4 && x.size(1) == d) {
    r.image = true;
    r.rows = reshape(permute(x, {0, 2, 3, 1}), {x.numel() / d, d});
    return r;
  }
  throw std::invalid_argument(who + ": input " + shape_str(x.shape()) + " must be [N, " + std::to_string(d) +
                              "], [B, T, " + std::to_string(d) + "] or an image [N, " + std::to_string(d) +
                              ", H, W]");
}

Variable from_rows(const Variable& rows, const Rows& layout) {
  if (!layout.image) return reshape(rows, layout.shape);
  const Shape& s = layout.shape;
  return permute(reshape(rows, {s[0], s[2], s[3], s[1]}), {0, 3, 1, 2});
}

Tensor keep_weights(const Tensor& pad_mask, const Rows& layout, DType dtype, int64_t& count, const std::string& who) {
  const int64_t R = layout.rows.size(0);
  if (!pad_mask.defined()) {
    count = R;
    return Tensor::ones({R, 1}, dtype, layout.rows.device());
  }
  if (layout.image)
    throw std::invalid_argument(who + ": images " + shape_str(layout.shape) +
                                " take no padding mask; pass an undefined mask");
  const Shape want(layout.shape.begin(), layout.shape.end() - 1);
  if (pad_mask.shape() != want)
    throw std::invalid_argument(who + ": padding mask " + shape_str(pad_mask.shape()) + " must have shape " +
                                shape_str(want) + " (the input " + shape_str(layout.shape) +
                                " without its feature dim; != 0 marks padding)");
  Tensor keep = eq(pad_mask.to(DType::Float64).contiguous(), Tensor::zeros(want, DType::Float64, pad_mask.device()));
  keep = keep.to(dtype).reshape({R, 1});
  count = (int64_t)(sum(keep.to(DType::Float64)).item() + 0.5);
  if (count == 0)
    throw std::invalid_argument(who + ": the padding mask pads every position, so there is no statistic to take; "
                                      "drop all-padding batches before the model");
  return keep;
}

Variable kept_mean(const Variable& v, const Tensor& w, int64_t count) {
  return affine(synced_sum(sum(mul(v, Variable(w)), {0}, /*keepdim=*/true)), 1.0 / (double)count, 0.0);
}

}  // namespace nl
