#pragma once
// Row loops that also sum per-column partials (the gain and bias gradients of LayerNorm and of the FFN
// activation): rows are split into one fixed chunk per thread, each chunk sums into its own slice of
// doubles, and the slices are added in chunk order, so the result does not depend on scheduling.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
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

/// Column sums of rows of T added one row at a time into a chunk's double partials (RowChunks::run's
/// `partials`), without a double load, convert, add and store per element: a float32 row is added to
/// float32 partials in T's lanes, and every kRows rows (and at finish()) those are added to the doubles.
/// A float64 row is added to the doubles directly. Each sum of at most kRows float32 terms is rounded at
/// most kRows times (relative error below kRows · 2^-24 of the block's magnitude) before it joins the
/// double total. Usage: `T* a = cols.row();` add the row into a[0, width), then `cols.next()`; finish().
template <typename T>
class ColumnSums {
 public:
  static constexpr int kRows = 16;
  /// `acc` is the chunk's [width] double partials (nullptr: no sums; row() returns nullptr).
  ColumnSums(double* acc, int64_t width) : acc_(acc), width_(acc ? width : 0) {
    if constexpr (!std::is_same_v<T, double>) part_.assign((size_t)width_, T(0));
  }
  /// Where the current row's values are added ([width] of T), nullptr without sums.
  T* row() {
    if (!acc_) return nullptr;
    if constexpr (std::is_same_v<T, double>) return acc_;
    else return part_.data();
  }
  /// Ends the current row (every kRows rows the T partials go to the doubles).
  void next() {
    if constexpr (!std::is_same_v<T, double>)
      if (acc_ && ++rows_ == kRows) flush();
  }
  /// Adds what is left in the T partials to the doubles; call once after the chunk's last row.
  void finish() {
    if constexpr (!std::is_same_v<T, double>)
      if (acc_ && rows_ > 0) flush();
  }

 private:
  void flush() {
    for (int64_t i = 0; i < width_; ++i) {
      acc_[i] += (double)part_[(size_t)i];
      part_[(size_t)i] = T(0);
    }
    rows_ = 0;
  }
  double* acc_;
  int64_t width_;
  int rows_ = 0;
  std::vector<T> part_;
};

}  // namespace nl::cpu
