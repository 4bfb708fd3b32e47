#pragma once
// BatchNorm with padding masks (Ioffe & Szegedy 2015; Shen et al. 2020 Algorithm 1 and Sec. 3 "BN with
// padding masks"), per feature over the non-padding rows of the batch (layouts in masked_norm.h):
//
//   training:  mu_B = mean over kept rows of x,  sigma_B^2 = biased variance over kept rows,
//              y = (x - mu_B) / sqrt(sigma_B^2 + eps)  (every row, pads included),  z = gamma ⊙ y + beta;
//              exact gradient through mu_B and sigma_B^2 (Shen Eq. 3), by autograd;
//              running_mean <- (1 - m) running_mean + m mu_B,
//              running_var  <- (1 - m) running_var + m sigma_B^2 N/(N - 1)  (unbiased, as torch; N kept rows);
//   eval:      y = (x - running_mean) / sqrt(running_var + eps)  (Algorithm 1, "Inference").
// Images [N, C, H, W] in training with the paper's reading, no batch-statistics sync and no probe hooks
// run as one kernel over the NCHW layout with the gradient in closed form (batch_norm_channels_fused);
// everything else through the rows path, by autograd.
//
// Two readings of the released sIncerass/powernorm code (seed-code §2.9; `reading`):
// - `sync` = MaskSyncBatchNorm, the shipped "batch" baseline: LayerScaling1D first (x / sqrt(mean over all d
//   features of x^2 + 1e-5), per row), pad rows replaced by the per-feature mean of the kept rows (in
//   training and in eval), then torch batch norm over all R rows: in training the mean is unchanged, the
//   biased variance becomes sum_kept (x - mu_B)^2 / R (shrunk by N/R), pad outputs equal beta, the running
//   variance uses R/(R - 1); in eval the running statistics, so pad outputs are those of mu_B (not beta);
//   momentum 0.05 by default.
// - `mask` = MaskBatchNorm, the file's other class (not used by the training scripts): batch statistics
//   over the kept rows in training *and* eval (use_run = False), the biased variance clamped from below by
//   eps instead of adding it, y = (x - mu_B) / sqrt(max(sigma_B^2, eps)); gain initialised uniform(0, 1);
//   the running statistics are kept (unbiased) but never read.
// Buffers: running_mean [d] (0), running_var [d] (1), num_batches_tracked (int64 scalar), as torch.
#include "nn/norm/masked_norm.h"
#include "nn/norm/norm_options.h"

namespace nl {

/// Which BatchNorm a BatchNorm module computes (see the file comment).
enum class BatchNormReading {
  Paper,  ///< masked BatchNorm as Shen et al. describe it (default)
  Sync,   ///< the released MaskSyncBatchNorm ("batch" baseline of the training scripts)
  Mask    ///< the released MaskBatchNorm (eps as a clamp, batch statistics in eval)
};

/// "paper", "sync", "mask"; and the inverse (throws std::invalid_argument naming the choices).
std::string batch_norm_reading_name(BatchNormReading r);
BatchNormReading parse_batch_norm_reading(const std::string& s);

/// Options of BatchNorm.
struct BatchNormConfig {
  double momentum = 0.1;  ///< running <- (1 - momentum) running + momentum batch (torch); in [0, 1]
  double eps = 1e-5;      ///< inside the sqrt (Paper, Sync) or a lower clamp of the variance (Mask)
  bool affine = true;     ///< gain "weight" (init 1; uniform(0, 1) for Mask) and "bias" (init 0), per feature
  BatchNormReading reading = BatchNormReading::Paper;
  bool released() const { return reading == BatchNormReading::Sync; }  ///< the MaskSyncBatchNorm reading
};

/// BatchNorm over d features (see the file comment). Training needs at least 2 kept rows.
/// Throws std::invalid_argument on d < 1, eps < 0, momentum outside [0, 1], a wrong layout or mask, or a
/// training batch with fewer than 2 kept rows.
class BatchNorm : public MaskedNorm {
 public:
  BatchNorm(int64_t d, BatchNormConfig cfg = {}, DType dtype = DType::Float32);
  std::string extra_repr() const override;
  const BatchNormConfig& config() const { return cfg_; }
  Variable weight, bias;  ///< [d]; undefined without affine
  int64_t dim;

 protected:
  Variable forward_masked(const Variable& x, const Tensor& pad_mask) override;

 private:
  /// running = (1 - momentum)·running + momentum·batch, the variance times `unbias` (0-d float64, n/(n - 1)),
  /// from the batch's mean and biased variance [1, d] or [d]; counts the batch.
  void update_running(const Tensor& mu, const Tensor& var, const Tensor& unbias);
  BatchNormConfig cfg_;
};

/// Norm-table factory of "batchnorm": o's "eps", "affine", "reading" ("paper", "sync" or "mask"; "released":
/// true is "sync") and "momentum" (0.1, or 0.05 for sync). Throws std::invalid_argument on another reading
/// or when "released": true and another "reading" disagree.
std::shared_ptr<Module> make_batch_norm(int64_t d, const NormOptions& o);

}  // namespace nl
