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

KeptRows keep_weights(const Tensor& pad_mask, const Rows& layout, DType dtype, const std::string& who) {
  const int64_t R = layout.rows.size(0);
  const Device dev = layout.rows.device();
  if (!pad_mask.defined()) return {Tensor::ones({R, 1}, dtype, dev), Tensor::scalar((double)R, DType::Float64, dev), R};
  if (layout.image)
    throw std::invalid_argument(who + ": images " + shape_str(layout.shape) +
                                " take no padding mask; pass an undefined mask");
  const Shape want(layout.shape.begin(), layout.shape.end() - 1);
  if (pad_mask.shape() != want)
    throw std::invalid_argument(who + ": padding mask " + shape_str(pad_mask.shape()) + " must have shape " +
                                shape_str(want) + " (the input " + shape_str(layout.shape) +
                                " without its feature dim; != 0 marks padding)");
  Tensor keep = eq(pad_mask.to(DType::Float64).contiguous(), Tensor::zeros(want, DType::Float64, pad_mask.device()));
  KeptRows k{keep.to(dtype).reshape({R, 1}), sum(keep), -1};
  if (k.count.device().is_cpu()) {  // free to read here; on a device the count stays there
    k.host_count = (int64_t)(k.count.item() + 0.5);
    if (k.host_count == 0)
      throw std::invalid_argument(who + ": the padding mask pads every position, so there is no statistic to take; "
                                        "drop all-padding batches before the model");
  } else {
    k.count = clamp_min(k.count, 1.0);  // an all-padding batch divides by 1 instead of 0
  }
  return k;
}

KeptRows synced_rows(KeptRows k) {
  if (!batch_stats_synced()) return k;
  const int64_t local = k.host_count >= 0 ? k.host_count : (int64_t)(k.count.item() + 0.5);
  k.host_count = synced_count(local);
  k.count = Tensor::scalar((double)k.host_count, DType::Float64, k.count.device());
  return k;
}

Variable kept_mean(const Variable& v, const KeptRows& k) {
  const Tensor inv = reciprocal(k.count).to(v.dtype());
  return mul(synced_sum(sum(mul(v, Variable(k.w)), {0}, /*keepdim=*/true)), Variable(inv));
}

}  // namespace nl
