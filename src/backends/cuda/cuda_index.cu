// CUDA row gathers and scatters (embedding forward/backward, gather and its adjoint). Indices are
// checked on the device: an index out of range is recorded in the device's error record (the element is
// skipped: zero for gathers, no write for scatters) and thrown, naming the kernel, at the next
// synchronisation (Backend::synchronize / copy_to_host).
// Scatters are deterministic and equal to the CPU's serial loop bit for bit: no float atomicAdd, whose
// order changes from run to run. The contributions are sorted by target (a stable CUB radix sort of
// (target, position) pairs), then one thread per (target, column) adds its segment in position order,
// the order of the CPU's loop (the segmented reduction of PyTorch's embedding_dense_backward, without
// its partial-segment split, so the sum order is the serial one).
#include <cub/device/device_radix_sort.cuh>

#include "backends/composite/scratch.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_launch.cuh"
#include "backends/cuda/cuda_rows.cuh"

namespace nl::cuda {
namespace {

__device__ inline void record(ErrorRecord* r, int op, long long index, long long bound) {
  if (atomicCAS(&r->op, 0, op) == 0) {
    r->index = index;
    r->bound = bound;
  }
}

// out[i, d] = table[ix[i], d] for i < n, d < D (gather: row r's own table via `row_stride`).
template <typename T>
__global__ void select_kernel(T* out, const T* table, const int64_t* ix, int64_t n, int64_t D, int64_t bound,
                              int64_t row_stride, int64_t per_row, ErrorRecord* err, int op) {
  NL_GRID_LOOP(e, n * D) {
    const int64_t i = e / D, d = e % D, id = ix[i];
    if (id < 0 || id >= bound) {
      if (d == 0) record(err, op, id, bound);
      out[e] = T(0);
      continue;
    }
    out[e] = table[(i / per_row) * row_stride + id * D + d];
  }
}
// Sort keys of a scatter: contribution e goes to table row key[e] = (e / per_row) * rows_per_table +
// ix[e] (row r's own table for a gather adjoint), or to `nrows` (sorted last, skipped) when ix[e] is
// outside [0, bound) -- recorded as an error. pos[e] = e.
__global__ void scatter_keys_kernel(unsigned long long* key, long long* pos, const int64_t* ix, int64_t n,
                                    int64_t bound, int64_t per_row, int64_t rows_per_table, int64_t nrows,
                                    ErrorRecord* err, int op) {
  NL_GRID_LOOP(e, n) {
    const int64_t id = ix[e];
    pos[e] = e;
    if (id < 0 || id >= bound) {
      record(err, op, id, bound);
      key[e] = (unsigned long long)nrows;
    } else {
      key[e] = (unsigned long long)((e / per_row) * rows_per_table + id);
    }
  }
}
// table[k, d] += src[pos[s], d] over the segment of sorted keys equal to k, in position order: the
// thread of the segment's first element does the whole segment (serial order = the CPU's).
template <typename T>
__global__ void segment_add_kernel(T* table, const T* src, const unsigned long long* key, const long long* pos,
                                   int64_t n, int64_t D, unsigned long long nrows) {
  NL_GRID_LOOP(e, n * D) {
    const int64_t s = e / D, d = e % D;
    const unsigned long long k = key[s];
    if (k >= nrows || (s > 0 && key[s - 1] == k)) continue;
    T acc = table[(int64_t)k * D + d];
    for (int64_t t = s; t < n && key[t] == k; ++t) acc += src[pos[t] * D + d];
    table[(int64_t)k * D + d] = acc;
  }
}

// table[target(e), d] += src[e, d] for e < n, d < D, deterministically (see the file comment). The
// target of e is (e / per_row) * rows_per_table + ix[e]; ix[e] must lie in [0, bound).
void sorted_scatter_add(CudaBackend& be, DeviceContext& c, const Desc& table, const void* src, const int64_t* ix,
                        int64_t n, int64_t D, int64_t bound, int64_t per_row, int64_t rows_per_table,
                        int64_t nrows, int op, const char* name) {
  using composite::Scratch;
  const int dev = table.device_index;
  Scratch keys(be, DType::Int64, dev, {n}), keys_sorted(be, DType::Int64, dev, {n});
  Scratch pos(be, DType::Int64, dev, {n}), pos_sorted(be, DType::Int64, dev, {n});
  auto* k0 = static_cast<unsigned long long*>(keys.d().data);
  auto* k1 = static_cast<unsigned long long*>(keys_sorted.d().data);
  auto* p0 = static_cast<long long*>(pos.d().data);
  auto* p1 = static_cast<long long*>(pos_sorted.d().data);
  scatter_keys_kernel<<<blocks_for(n), kThreads, 0, c.stream>>>(k0, p0, ix, n, bound, per_row, rows_per_table,
                                                                 nrows, c.err_dev, op);
  check_launch(name);
  int end_bit = 1;  // keys lie in [0, nrows]: sort only the bits that can differ
  while (end_bit < 64 && (static_cast<unsigned long long>(nrows) >> end_bit) != 0) ++end_bit;
  size_t temp_bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k0, k1, p0, p1, n, 0, end_bit, c.stream), name);
  Scratch temp(be, DType::Int64, dev, {(int64_t)(temp_bytes / 8 + 1)});
  check(cub::DeviceRadixSort::SortPairs(temp.d().data, temp_bytes, k0, k1, p0, p1, n, 0, end_bit, c.stream), name);
  dispatch_all(table.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    segment_add_kernel<T><<<blocks_for(n * D), kThreads, 0, c.stream>>>(
        static_cast<T*>(table.data), static_cast<const T*>(src), k1, p1, n, D, (unsigned long long)nrows);
  });
  check_launch(name);
}
}  // namespace

void CudaBackend::index_select_rows(const Desc& out, const Desc& table, const Desc& idx) {
  const int64_t V = table.shape[0], D = V ? table.numel() / V : 0, n = idx.numel();
  if (n * D == 0) return;
  DeviceContext& c = context(table.device_index);
  const auto launch = [&](auto tag) {
    using T = decltype(tag);
    select_kernel<T><<<blocks_for(n * D), kThreads, 0, c.stream>>>(
        static_cast<T*>(out.data), static_cast<const T*>(table.data), static_cast<const int64_t*>(idx.data), n, D,
        V, 0, n, c.err_dev, kIndexSelect);
  };
  if (table.dtype == DType::BFloat16)  // moved as 16-bit words (a beam's cached keys and values under autocast)
    launch(uint16_t{});
  else
    dispatch_all(table.dtype, "index_select_rows", launch);
  check_launch("index_select_rows");
}

void CudaBackend::index_add_rows(const Desc& table, const Desc& idx, const Desc& src) {
  const int64_t V = table.shape[0], D = V ? table.numel() / V : 0, n = idx.numel();
  if (n * D == 0) return;
  DeviceContext& c = context(table.device_index);
  sorted_scatter_add(*this, c, table, src.data, static_cast<const int64_t*>(idx.data), n, D, V, n, 0, V, kIndexAdd,
                     "index_add_rows");
}

// gather_rows: out[r, k] = in[r, idx[r, k]] is select_kernel with D = 1, the table of row r at r * C.
void CudaBackend::gather_rows(const Desc& out, const Desc& in, const Desc& idx) {
  const int64_t R = rows_of(in), C = cols_of(in), K = cols_of(idx);
  if (R * K == 0) return;
  DeviceContext& c = context(in.device_index);
  dispatch_all(in.dtype, "gather_rows", [&](auto tag) {
    using T = decltype(tag);
    select_kernel<T><<<blocks_for(R * K), kThreads, 0, c.stream>>>(
        static_cast<T*>(out.data), static_cast<const T*>(in.data), static_cast<const int64_t*>(idx.data), R * K, 1, C,
        C, K, c.err_dev, kGather);
  });
  check_launch("gather_rows");
}

// scatter_add_rows: gin[r, idx[r, k]] += g[r, k] is a scatter of R * K single elements into the R * C
// rows of width 1 of gin, row r's indices offset by r * C.
void CudaBackend::scatter_add_rows(const Desc& gin, const Desc& idx, const Desc& g) {
  const int64_t R = rows_of(gin), C = cols_of(gin), K = cols_of(idx);
  if (R * K == 0) return;
  DeviceContext& c = context(gin.device_index);
  sorted_scatter_add(*this, c, gin, g.data, static_cast<const int64_t*>(idx.data), R * K, 1, C, K, C, R * C,
                     kScatterAdd, "scatter_add_rows");
}

}  // namespace nl::cuda
