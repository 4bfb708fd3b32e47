#pragma once
// Gradient accumulation over `update_freq` micro-batches (fairseq's --update-freq).
//
// Gradients are SUMMED across micro-batches (each backward() adds into the leaf gradients, as in
// torch), then normalised once before the optimizer step, in one of two ways:
//  - Normalize::Mean (default): divide by the number of micro-batches k. With a per-batch mean loss
//    and equal micro-batch sizes this equals the gradient of one batch k times larger, so lr does not
//    have to change with update_freq.
//  - Normalize::BySampleSize (fairseq): the loss of each micro-batch is a SUM over its samples/tokens;
//    divide the summed gradient by the total sample size reported to accumulate(). This weights every
//    sample equally even when micro-batches differ in size.
// Usage:
//   GradAccumulator acc(params, 4);
//   for each micro-batch { loss.backward(); if (acc.accumulate()) { acc.finalize(); opt.step(); opt.zero_grad(); } }
#include <cstdint>
#include <vector>

#include "autograd/variable.h"

namespace nl {

class GradAccumulator {
 public:
  enum class Normalize { Mean, BySampleSize };

  /// `update_freq` ≥ 1 micro-batches per update; throws std::invalid_argument otherwise.
  GradAccumulator(std::vector<Variable> params, int64_t update_freq, Normalize mode = Normalize::Mean);

  /// Call after each micro-batch's backward(); `sample_size` is that micro-batch's number of samples
  /// (or tokens) and only matters for BySampleSize. Returns true when update_freq micro-batches have
  /// been accumulated, i.e. it is time to finalize() and step.
  bool accumulate(double sample_size = 1.0);
  /// Rescales the accumulated gradients out of place (by 1/k for Mean, 1/Σ sample_size for
  /// BySampleSize, where k is the number of micro-batches accumulated so far — so a final partial
  /// group at the end of an epoch is averaged correctly) and resets the counters. Returns the factor
  /// used. Throws std::logic_error if nothing was accumulated.
  double finalize();
  /// Forgets the counters (does not touch gradients).
  void reset();

  int64_t update_freq() const { return update_freq_; }
  /// Micro-batches accumulated since the last finalize()/reset().
  int64_t pending() const { return count_; }

 private:
  std::vector<Variable> params_;
  int64_t update_freq_;
  Normalize mode_;
  int64_t count_ = 0;
  double samples_ = 0;
};

}  // namespace nl
