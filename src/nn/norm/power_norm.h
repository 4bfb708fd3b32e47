#pragma once
// Power Normalization (Shen et al. 2020, "PowerNorm: Rethinking Batch Normalization in Transformers"),
// per feature over the non-padding rows of the batch (layouts and padding masks in masked_norm.h).
// psi_B^2 = mean over kept rows of x^2 (quadratic mean: no centring, no Bessel correction).
//
// PowerNormV (PN-V, Sec. 4.1, Eq. 4-6):
//   training:  y = x / sqrt(psi_B^2 + eps),  z = gamma ⊙ y + beta, with the EXACT gradient through psi_B
//              (Eq. 6: dL/dx_i = gamma/psi_B (dL/dy_i - (1/B) sum_j dL/dy_j x^_j x^_i)), by autograd;
//              running_phi <- alpha_fwd running_phi + (1 - alpha_fwd) psi_B^2 (for eval only);
//   eval:      y = x / sqrt(running_phi + eps).
//
// PowerNorm (PN, Sec. 4.2, Algorithm 2, Eq. 8-13; as the released MaskPowerNorm/PowerFunction,
// seed-code §2.1-2.7). Per training forward, with it = 1, 2, ... counting training forwards:
//   1. layer scale (on by default; GroupScaling1D, rms_norm.h): x <- x / sqrt(mean over each of G
//      contiguous feature groups of x^2 + 1e-5), every row, plain autograd;
//   2. psi_B^2 over the kept rows (no gradient);
//   3. forward scale s_f = sqrt(psi_B^2 + eps) while it <= warmup_iters, else sqrt(running_phi + eps)
//      with running_phi = psi_{t-1}^2 from BEFORE this step's update (Eq. 8);
//   4. running update: if it < warmup_iters, running_phi <- running_phi (it-1)/it + psi_B^2/it
//      (cumulative mean); then (code: always; `warmup_double_update` = false: only after warmup)
//      running_phi <- alpha_fwd running_phi + (1 - alpha_fwd) psi_B^2  (Eq. 10);
//   5. z = power_norm_fused(x, s_f, s_b, E, alpha_bwd): the approximate backward of Eq. 11-13 (see
//      autograd/functions.h) with s_b = sqrt(psi_B^2 + eps) (code, `bwd_scale` "batch") or s_f (paper
//      Eq. 12, `bwd_scale` "running"); E (buffer ema_gz) is updated once per backward over all rows;
//   6. y = gamma ⊙ z + beta (autograd: dgamma = sum over all rows of dL/dy ⊙ z, dbeta = sum dL/dy).
//   eval: layer scale, then y = x / sqrt(running_phi + eps), gamma, beta (Algorithm 2, "Inference").
// The running statistics are module buffers updated by the module only: running_phi and iters in
// forward; ema_gz (E) after each backward pass: the op's backward computes the new E into the module's
// PowerNormEUpdate slot and the module copies it into the buffer (bumping its version) from a
// post-backward callback, i.e. once every node of the pass has run (autograd/post_backward.h). All are
// in state_dict, so a checkpoint taken after backward resumes PN exactly.
// Buffers: running_phi [d] (init 1), ema_gz [d] (init 0), iters (int64 scalar, 0).
// Data-parallel training: psi_B^2 is pooled over the replicas only with --sync-batch-stats
// (stats_sync.h), which is off by default because the released code (sIncerass/powernorm, even its
// MaskSyncBatchNorm: need_sync = False) never syncs: each GPU used its own batch statistics. PN's ema_gz
// stays local in either case.
#include "nn/norm/masked_norm.h"
#include "nn/norm/norm_options.h"

namespace nl {

/// Options of PN-V.
struct PowerNormVConfig {
  double alpha_fwd = 0.9;   ///< running_phi <- alpha running_phi + (1 - alpha) psi_B^2; in [0, 1]
  double eps = 1e-5;        ///< inside the sqrt
  bool affine = true;       ///< gamma "weight" (init 1), beta "bias" (init 0)
  bool layer_scale = false; ///< GroupScaling1D before PN-V (the paper's layer-scale layer, Sec. 5.1)
  int64_t layer_scale_groups = 1;
};

/// Options of PN.
struct PowerNormConfig {
  double alpha_fwd = 0.9;   ///< forward running average (Eq. 10); in [0, 1]
  double alpha_bwd = 0.9;   ///< backward running average of nu (Eq. 13); in [0, 1]
  double eps = 1e-5;        ///< inside the sqrt
  bool affine = true;       ///< gamma/beta; always used by the released code (its affine flag is ignored)
  int64_t warmup_iters = 1000;  ///< batch statistics in forward while it <= warmup_iters (NormSelect default;
                                ///< the code passes --warmup-updates to per-layer norms)
  bool warmup_double_update = true;  ///< during warmup also apply the EMA after the cumulative mean (code)
  bool bwd_scale_batch = true;  ///< dL/dx divided by batch psi_B (code) instead of psi_{t-1} (paper Eq. 12)
  bool layer_scale = true;      ///< GroupScaling1D before PN (code; NormSelect sets groups = attention heads)
  int64_t layer_scale_groups = 1;
};

/// PN-V over d features (see the file comment). Throws std::invalid_argument on d < 1, eps < 0, alpha
/// outside [0, 1], layer_scale_groups not dividing d, or a wrong layout or mask.
class PowerNormV : public MaskedNorm {
 public:
  PowerNormV(int64_t d, PowerNormVConfig cfg = {}, DType dtype = DType::Float32);
  std::string extra_repr() const override;
  Variable weight, bias;
  int64_t dim;

 protected:
  Variable forward_masked(const Variable& x, const Tensor& pad_mask) override;

 private:
  PowerNormVConfig cfg_;
};

/// PN over d features (see the file comment). Same throws as PowerNormV, plus warmup_iters < 0.
class PowerNorm : public MaskedNorm {
 public:
  PowerNorm(int64_t d, PowerNormConfig cfg = {}, DType dtype = DType::Float32);
  /// Detaches the E slot from this module: a graph that outlives it drops its E update.
  ~PowerNorm() override;
  std::string extra_repr() const override;
  const PowerNormConfig& config() const { return cfg_; }
  Variable weight, bias;
  int64_t dim;

 protected:
  Variable forward_masked(const Variable& x, const Tensor& pad_mask) override;

 private:
  /// Writes a new E into the ema_gz buffer (in place: the version counter is bumped).
  void apply_E(const Tensor& next_E);

  /// The next iteration number: the iters buffer + 1, incremented on the buffer's device and mirrored on
  /// the host (the warmup's branches need it), so a training step never reads the buffer back; it is read
  /// once when the buffer was replaced or written by someone else (load_state_dict, to(device)).
  int64_t next_iter();

  PowerNormConfig cfg_;
  std::shared_ptr<PowerNormEUpdate> e_update_;  ///< shared with this module's nodes (power_norm_fused)
  int64_t iters_host_ = 0;              ///< the iters buffer's value as of the last next_iter()
  std::weak_ptr<Storage> iters_storage_;  ///< its storage then
  uint64_t iters_version_ = 0;           ///< and that storage's version then
};

/// Norm-table factory of "powernorm-v": o's "eps", "affine", "alpha_fwd", "layer_scale", "layer_scale_groups".
std::shared_ptr<Module> make_power_norm_v(int64_t d, const NormOptions& o);
/// Norm-table factory of "powernorm": o's "eps", "affine", "alpha_fwd", "alpha_bwd", "warmup_iters",
/// "warmup_double_update", "bwd_scale" ("batch" | "running"), "layer_scale", "layer_scale_groups".
std::shared_ptr<Module> make_power_norm(int64_t d, const NormOptions& o);

}  // namespace nl
