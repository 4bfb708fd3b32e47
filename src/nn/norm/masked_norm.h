#pragma once
// MaskedNorm: the base of the norms whose statistics pool over the batch (batchnorm, powernorm-v,
// powernorm), which must leave padding positions out of those statistics (Shen et al. 2020, Sec. 3:
// "BN with padding masks"; seed-code §2.5). Module::forward takes one Variable, so these norms take the
// padding mask through a second, typed entry point:
//
//   norm_forward(*norm, x, pad_mask)   <- what every norm slot should call (works for ANY norm:
//                                         per-token norms ignore the mask, MaskedNorms use it);
//   masked.forward(x, pad_mask)        <- the same without hooks; forward(x) = no padding.
//
// Layouts shared by every norm of this directory except the LayerNorm family (`rows` below):
//   [N, D] and [B, T, D]: features last; a row is one sample / token;
//   [N, C, H, W]:         images, channels at dim 1; a row is one pixel of one image (permuted to
//                         [N, H, W, C] and flattened).
// The padding mask has the input's shape without the feature dim ([B, T] for [B, T, D], [N] for
// [N, D]); any dtype, != 0 marks a padding position (torch.nn.MultiheadAttention's key_padding_mask
// convention, as AttentionOptions). Images take no mask.
#include <functional>
#include <utility>
#include <vector>

#include "nn/module.h"

namespace nl {

/// The batch statistics of one training forward of a batch-statistic norm, as a batch-statistics hook
/// sees them (probes of Shen et al. 2020, Figure 2 and the gradient-norm figure). `mean` and `var` are
/// the tape's own Variables (retain_grad() them in the hook to read dL/dmu_B and dL/dvar after backward;
/// an undefined or absent gradient means no gradient flows through that statistic, as in PN's
/// approximate backward); the running tensors are copies taken BEFORE this forward's update.
struct BatchStats {
  Variable mean;        ///< mu_B [1, d] over the kept rows (batchnorm); undefined for the power norms
  Variable var;         ///< sigma_B^2 [1, d] (batchnorm: the variance the forward divides by) or
                        ///< psi_B^2 [1, d] (powernorm-v, powernorm)
  Tensor running_mean;  ///< running_mean [d] (batchnorm); undefined for the power norms
  Tensor running_var;   ///< running_var [d] (batchnorm) or running_phi [d] (the power norms)
};

/// Base class of the batch-statistic norms (see the file comment). Subclasses implement
/// forward_masked; forward(x) runs it without a mask.
class MaskedNorm : public Module {
 public:
  using Module::Module;
  /// Normalises x (see the layouts above) with statistics over the non-padding rows only. The output
  /// has x's shape and is computed at padding positions too (from the non-pad statistics), as in the
  /// released MaskPowerNorm. An undefined pad_mask means no padding. Throws std::invalid_argument on a
  /// mask of the wrong shape or one that pads every position.
  Variable forward(const Variable& x, const Tensor& pad_mask) { return forward_masked(x, pad_mask); }
  Variable forward(const Variable& x) final { return forward_masked(x, Tensor()); }
  /// forward(x, pad_mask), then the forward hooks (with input {x}).
  Variable operator()(const Variable& x, const Tensor& pad_mask);

  /// Called by every TRAINING forward with this batch's statistics (see BatchStats), before the
  /// running statistics are updated. Eval forwards call no batch-statistics hook.
  using BatchStatsHook = std::function<void(MaskedNorm&, const BatchStats&)>;
  /// Adds a hook; returns a handle for remove_batch_stats_hook.
  int register_batch_stats_hook(BatchStatsHook hook);
  /// Removes a hook by handle (unknown handles are ignored).
  void remove_batch_stats_hook(int handle);

 protected:
  virtual Variable forward_masked(const Variable& x, const Tensor& pad_mask) = 0;
  /// True when a batch-statistics hook is registered (so forwards build BatchStats only then).
  bool has_batch_stats_hooks() const { return !stats_hooks_.empty(); }
  /// Runs the batch-statistics hooks.
  void run_batch_stats_hooks(const BatchStats& stats);

 private:
  std::vector<std::pair<int, BatchStatsHook>> stats_hooks_;
  int next_stats_hook_ = 0;
};

/// The call for norm slots: runs `norm` on x with its hooks, passing pad_mask when the norm is a
/// MaskedNorm and ignoring it otherwise (per-token norms need none). pad_mask may be undefined.
Variable norm_forward(Module& norm, const Variable& x, const Tensor& pad_mask);

/// True when `norm` pools statistics over the batch (a MaskedNorm): such a norm must not sit in a
/// causal decoder, where the batch statistics would leak future tokens (Shen et al. 2020, Sec. 5.1).
bool uses_batch_statistics(const Module& norm);

/// x in one of the layouts above, viewed as rows [R, D] (the feature/channel dim last).
struct Rows {
  Variable rows;   ///< [R, D]
  Shape shape;     ///< the input's shape
  bool image = false;
  int64_t features() const { return rows.size(1); }
};

/// Views x as rows; `who` names the layer in errors. Throws std::invalid_argument unless x is
/// [N, d], [B, T, d] or [N, d, H, W].
Rows to_rows(const Variable& x, int64_t d, const std::string& who);
/// The inverse of to_rows: [R, D] back to the input's layout.
Variable from_rows(const Variable& rows, const Rows& layout);

/// The kept (non-padding) rows of a batch: per-row weights and their count, which stays on the rows'
/// device (a training step never reads it back; docs/architecture.md).
struct KeptRows {
  Tensor w;               ///< [R, 1] in the input's dtype: 1 for a kept row, 0 for a padding row
  Tensor count;           ///< 0-d float64 on the rows' device: the number of kept rows
  int64_t host_count = -1;  ///< the same number when known without a device read (no mask, or on the cpu); else -1
};

/// The kept rows of `layout` (all of them when pad_mask is undefined). Throws std::invalid_argument when
/// the mask's shape is not the input's without its last dim, when the input is an image, or — where the
/// count is known without a device read (on the cpu) — when every row is padding (naming the shapes and
/// the fix). On a device an all-padding batch is not detected here (its statistics divide by 1).
KeptRows keep_weights(const Tensor& pad_mask, const Rows& layout, DType dtype, const std::string& who);

/// `k` with its count summed over the replicas under synchronised batch statistics (stats_sync.h; a host
/// collective, so the count is read once), else `k` itself. Training forwards only.
KeptRows synced_rows(KeptRows k);

/// Mean over the kept rows, per feature: sum_r w_r v_r / count, [R, D] -> [1, D] (differentiable; the
/// divisor is 1/count rounded to v's dtype, as affine(x, 1/count) would take it). With synchronised batch
/// statistics the sum runs over every replica's rows and `k` must be synced_rows'.
Variable kept_mean(const Variable& v, const KeptRows& k);

}  // namespace nl
