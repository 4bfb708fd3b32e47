#pragma once
// CompositeKernels: every fused kernel (FusedKernels) written with the core kernels of one Backend
// (fill, copy, unary, binary, where, random, reduce, gathers/scatters) on scratch buffers from that
// backend's allocator. It is what Backend::fused() returns for a backend without its own fused kernels,
// and the base class of a backend that provides only some of them (override those, inherit the rest).
// Results equal the CPU's fused kernels up to rounding (tests/backends/test_composite_kernels.cpp).
// Index checks (cross-entropy targets) copy the indices to the host: a fallback, not a fast path.
#include "backends/backend.h"

namespace nl {

/// Fused kernels composed from `core`'s core kernels; same contracts as FusedKernels.
class CompositeKernels : public FusedKernels {
 public:
  /// `core` must outlive this object; only its core kernels are called (never core.fused()).
  explicit CompositeKernels(Backend& core) : be_(core) {}

  void softmax(const Desc& out, const Desc& in, bool log) override;
  void softmax_backward(const Desc& gin, const Desc& gout, const Desc& y, bool log) override;
  void dropout(const Desc& out, const Desc& in, double p, uint64_t seed, uint64_t offset) override;
  void dropout_add(const Desc& out, const Desc& residual, const Desc& in, double p, uint64_t seed,
                   uint64_t offset) override;
  void bias_relu_dropout(const Desc& out, const Desc& x, const Desc& bias, double p, uint64_t seed,
                         uint64_t offset) override;
  void bias_relu_dropout_backward(const Desc& gx, const Desc& gbias, const Desc& gout, const Desc& out,
                                  double p) override;
  void im2col(const Desc& cols, const Desc& in, const Conv2dGeom& g) override;
  void col2im(const Desc& gin, const Desc& cols, const Conv2dGeom& g) override;
  void maxpool2d(const Desc& out, const Desc& idx, const Desc& in, const Conv2dGeom& g) override;
  void maxpool2d_backward(const Desc& gin, const Desc& gout, const Desc& idx, const Conv2dGeom& g) override;
  void cross_entropy(const Desc& loss, const Desc& stats, const Desc& logits, const Desc& target,
                     int64_t ignore_index, double label_smoothing, const Desc& grad, double grad_scale) override;
  void cross_entropy_backward(const Desc& glogits, const Desc& gloss, const Desc& logits, const Desc& stats,
                              const Desc& target, int64_t ignore_index, double label_smoothing) override;
  void layer_norm(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x, const Desc& weight,
                  const Desc& bias, const NormKernelOpts& o) override;
  void layer_norm_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy, const Desc& x,
                           const Desc& mean, const Desc& rstd, const Desc& weight, const NormKernelOpts& o,
                           bool accumulate) override;
  void layer_norm_channels(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x, const Desc& weight,
                           const Desc& bias, int64_t groups, const NormKernelOpts& o) override;
  void layer_norm_channels_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                    const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                    int64_t groups, const NormKernelOpts& o, bool accumulate) override;
  void batch_norm_channels(const Desc& y, const Desc& mean, const Desc& var, const Desc& rstd, const Desc& x,
                           const Desc& weight, const Desc& bias, double eps) override;
  void batch_norm_channels_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                    const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                    bool accumulate) override;
  void attention_softmax(const Desc& probs, const Desc& dropped, const Desc& scores, const Desc& key_padding,
                         const Desc& attn_mask, const AttentionKernelOpts& o) override;
  void attention_softmax_backward(const Desc& gscores, const Desc& dropped, const Desc& gprobs, const Desc& probs,
                                  const AttentionKernelOpts& o) override;
  void adam_step(const Desc& param, const Desc& grad, const Desc& m, const Desc& v,
                 const AdamKernelOpts& o) override;

 protected:
  /// The backend whose core kernels (and allocator) the composites use.
  Backend& core() { return be_; }

 private:
  Backend& be_;
};

}  // namespace nl
