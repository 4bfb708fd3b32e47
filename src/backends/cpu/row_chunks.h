#pragma once
// Row loops that also sum per-column partials (the gain and bias gradients of LayerNorm and of the FFN
// activation): rows are split into one fixed chunk per thread, each chunk sums into its own slice of
// doubles, and the slices are added in chunk order, so the result does not depend on scheduling.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/cpu/threads.h"

namespace nl::cpu {

/// Partial sums of `width` doubles per chunk over R rows of `cols` elements (threads only when
/// R * cols >= kParallelGrain).
class RowChunks {
 public:
  RowChunks(int64_t R, int64_t cols, int64_t width)
      : R_(R),
        nt_((R * cols >= kParallelGrain) ? std::max(1, omp_get_max_threads()) : 1),
        chunk_((R + nt_ - 1) / nt_),
        width_(width),
        acc_((size_t)(width * nt_), 0.0) {}
  /// Calls f(first_row, end_row, partials) once per chunk, in parallel when there are several;
  /// `partials` is the chunk's [width] slice, nullptr when width is 0.
  template <class F>
  void run(F&& f) {
    auto one = [&](int t) {
      f(std::min(R_, t * chunk_), std::min(R_, (t + 1) * chunk_), width_ ? acc_.data() + (size_t)(width_ * t) : nullptr);
    };
    if (nt_ == 1) {
      one(0);
    } else {
#pragma omp parallel for schedule(static, 1) num_threads(nt_)
      for (int t = 0; t < nt_; ++t) one(t);
    }
  }
  /// The partials of all chunks added in chunk order ([width]); call after run().
  const double* total() {
    for (int t = 1; t < nt_; ++t)
      for (int64_t i = 0; i < width_; ++i) acc_[(size_t)i] += acc_[(size_t)(width_ * t + i)];
    return acc_.data();
  }

 private:
  int64_t R_;
  int nt_;
  int64_t chunk_, width_;
  std::vector<double> acc_;
};

}  // namespace nl::cpu
