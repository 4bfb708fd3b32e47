// CPU reductions over the trailing dims of a strided view (sum, mean, max, min, argmax).
// Sums accumulate in double. Rows (outputs) are split across OpenMP threads.
#include <cmath>
#include <limits>
#include <string>
#include <stdexcept>
#include <vector>

#include "backends/composite/scratch.h"
#include "backends/cpu/row_chunks.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/profiler.h"
#include "backends/cpu/threads.h"

namespace nl {

namespace {
// Sum / Mean of a bfloat16 view into float32 `out` (Backend::reduce). Column sums of a row-major matrix
// (a bias gradient: the reduced dims lead in memory) read the rows once, each value widened exactly and
// added in float32 blocks of 16 rows that join double sums (cpu::ColumnSums); any other view is widened to
// a float32 copy first and reduced as float32.
void reduce_bf16(CpuBackend& be, ReduceOp op, const Desc& out, const Desc& in, int nreduce, int64_t outer,
                 int64_t inner) {
  if ((op != ReduceOp::Sum && op != ReduceOp::Mean) || out.dtype != DType::Float32)
    throw no_bf16_error(reduce_name(op));  // sums into float32 only (sum_rows)
  const int nouter = in.ndim - nreduce;
  const bool columns = nouter == 1 && nreduce == 1 && in.strides[0] == 1 && in.strides[1] == outer;
  float* o = static_cast<float*>(out.data);
  const double scale = op == ReduceOp::Mean ? 1.0 / (double)inner : 1.0;
  if (columns) {
    const uint16_t* x = static_cast<const uint16_t*>(in.data);
    std::vector<double> acc((size_t)outer, 0.0);
    cpu::ColumnSums<float> cols(acc.data(), outer);  // float32 blocks of 16 rows added to double
    for (int64_t i = 0; i < inner; ++i) {
      const uint16_t* xr = x + i * outer;
      float* a = cols.row();
#pragma omp simd
      for (int64_t j = 0; j < outer; ++j) a[j] += bf16_bits_to_float(xr[j]);
      cols.next();
    }
    cols.finish();
    for (int64_t j = 0; j < outer; ++j) o[j] = (float)(acc[(size_t)j] * scale);
    return;
  }
  std::vector<float> wide((size_t)in.numel());
  const Desc w = composite::dense_like(in, wide.data(), DType::Float32);
  be.copy(w, in);
  be.reduce(op, out, w, nreduce);
}
}  // namespace

void CpuBackend::reduce(ReduceOp op, const Desc& out, const Desc& in, int nreduce) {
  prof::Scope prof_scope(prof::Cat::Reduce);
  const int nouter = in.ndim - nreduce;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < nouter; ++i) outer *= in.shape[i];
  for (int i = nouter; i < in.ndim; ++i) inner *= in.shape[i];
  if (inner == 0 && (op == ReduceOp::Max || op == ReduceOp::Min || op == ReduceOp::ArgMax))
    throw std::invalid_argument("max/min/argmax over an empty dimension");
  if (in.dtype == DType::BFloat16) return reduce_bf16(*this, op, out, in, nreduce, outer, inner);
  // Inner dims coalesced into one stride when possible.
  bool inner_flat = true;
  int64_t inner_stride = nreduce ? in.strides[in.ndim - 1] : 1;
  {
    int64_t expect = inner_stride;
    for (int i = in.ndim - 1; i >= nouter; --i) {
      if (in.shape[i] != 1 && in.strides[i] != expect) inner_flat = false;
      expect = in.strides[i] * in.shape[i];
    }
  }
  // Column sums: the reduced dims lead a contiguous tensor (e.g. a bias gradient summed over the
  // batch). Rows are added into a running buffer instead of walking each column with a stride.
  if ((op == ReduceOp::Sum || op == ReduceOp::Mean) && inner_flat && nouter > 0 && inner > 1) {
    bool outer_unit = true;
    int64_t expect = 1;
    for (int i = nouter - 1; i >= 0; --i) {
      if (in.shape[i] != 1 && in.strides[i] != expect) outer_unit = false;
      expect *= in.shape[i];
    }
    if (outer_unit && inner_stride == outer && is_floating(in.dtype)) {
      dispatch_floating(in.dtype, reduce_name(op), [&](auto tag) {
        using T = decltype(tag);
        const T* x = static_cast<const T*>(in.data);
        T* o = static_cast<T*>(out.data);
        std::vector<double> acc(outer, 0.0);
        for (int64_t i = 0; i < inner; ++i) {
          const T* row = x + i * outer;
          for (int64_t j = 0; j < outer; ++j) acc[j] += (double)row[j];
        }
        const double scale = op == ReduceOp::Mean ? 1.0 / (double)inner : 1.0;
        for (int64_t j = 0; j < outer; ++j) o[j] = T(acc[j] * scale);
      });
      return;
    }
  }
  // The longest run of trailing reduced dims that is one stride apart (e.g. H x W of a per-channel sum
  // over N, H, W): a sum over non-flat dims walks these blocks directly and computes an offset once per
  // block instead of once per element.
  int tail_from = in.ndim;
  int64_t tail = 1;
  {
    int64_t expect = inner_stride;
    for (int i = in.ndim - 1; i >= nouter; --i) {
      if (in.shape[i] != 1 && in.strides[i] != expect) break;
      tail *= in.shape[i];
      expect = in.strides[i] * in.shape[i];
      tail_from = i;
    }
  }
  const int64_t blocks = tail > 0 ? inner / tail : 0;
  dispatch_dtype(in.dtype, reduce_name(op), [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(in.data);
    auto offset_of = [&](int64_t o, int from, int to) {
      int64_t off = 0;
      for (int d = to - 1; d >= from; --d) {
        off += (o % in.shape[d]) * in.strides[d];
        o /= in.shape[d];
      }
      return off;
    };
#pragma omp parallel for schedule(static) if (outer * inner >= kParallelGrain && outer > 1)
    for (int64_t o = 0; o < outer; ++o) {
      const T* base = x + offset_of(o, 0, nouter);
      auto at = [&](int64_t i) -> T {
        return inner_flat ? base[i * inner_stride] : base[offset_of(i, nouter, in.ndim)];
      };
      switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Mean: {
          double acc = 0;
          if (inner_flat && inner_stride == 1) {
#pragma omp simd reduction(+ : acc)
            for (int64_t i = 0; i < inner; ++i) acc += (double)base[i];
          } else if (inner_flat) {
            for (int64_t i = 0; i < inner; ++i) acc += (double)base[i * inner_stride];
          } else {
            for (int64_t b = 0; b < blocks; ++b) {
              const T* p = base + offset_of(b, nouter, tail_from);
              for (int64_t i = 0; i < tail; ++i) acc += (double)p[i * inner_stride];
            }
          }
          if (op == ReduceOp::Mean) acc /= (double)inner;
          static_cast<T*>(out.data)[o] = static_cast<T>(acc);
          break;
        }
        case ReduceOp::Max:
        case ReduceOp::Min:
        case ReduceOp::ArgMax: {
          T best = at(0);
          int64_t bi = 0;
          const bool mx = op != ReduceOp::Min;
          for (int64_t i = 1; i < inner; ++i) {
            T v = at(i);
            bool better = mx ? (v > best) : (v < best);
            if constexpr (std::is_floating_point_v<T>) better = better || (std::isnan(v) && !std::isnan(best));
            if (better) {
              best = v;
              bi = i;
            }
          }
          if (op == ReduceOp::ArgMax)
            static_cast<int64_t*>(out.data)[o] = bi;
          else
            static_cast<T*>(out.data)[o] = best;
          break;
        }
      }
    }
  });
}

}  // namespace nl
