// CUDA row gathers and scatters (embedding forward/backward, gather and its adjoint). Indices are
// checked on the device: an index out of range is recorded in the device's error record (the element is
// skipped: zero for gathers, no write for scatters) and thrown, naming the kernel, at the next
// synchronisation (Backend::synchronize / copy_to_host). Scatters use atomicAdd (rows may repeat), so
// float sums may differ from the CPU's serial order in the last bits.
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
template <typename T>
__device__ inline void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, int64_t>)
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  else
    atomicAdd(p, v);
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
// table[ix[i], d] += src[i, d] (scatter: row r's own table via `row_stride`).
template <typename T>
__global__ void scatter_kernel(T* table, const T* src, const int64_t* ix, int64_t n, int64_t D, int64_t bound,
                               int64_t row_stride, int64_t per_row, ErrorRecord* err, int op) {
  NL_GRID_LOOP(e, n * D) {
    const int64_t i = e / D, d = e % D, id = ix[i];
    if (id < 0 || id >= bound) {
      if (d == 0) record(err, op, id, bound);
      continue;
    }
    atomic_add(&table[(i / per_row) * row_stride + id * D + d], src[e]);
  }
}
}  // namespace

void CudaBackend::index_select_rows(const Desc& out, const Desc& table, const Desc& idx) {
  const int64_t V = table.shape[0], D = V ? table.numel() / V : 0, n = idx.numel();
  if (n * D == 0) return;
  DeviceContext& c = context(table.device_index);
  dispatch_all(table.dtype, "index_select_rows", [&](auto tag) {
    using T = decltype(tag);
    select_kernel<T><<<blocks_for(n * D), kThreads, 0, c.stream>>>(
        static_cast<T*>(out.data), static_cast<const T*>(table.data), static_cast<const int64_t*>(idx.data), n, D,
        V, 0, n, c.err_dev, kIndexSelect);
  });
  check_launch("index_select_rows");
}

void CudaBackend::index_add_rows(const Desc& table, const Desc& idx, const Desc& src) {
  const int64_t V = table.shape[0], D = V ? table.numel() / V : 0, n = idx.numel();
  if (n * D == 0) return;
  DeviceContext& c = context(table.device_index);
  dispatch_all(table.dtype, "index_add_rows", [&](auto tag) {
    using T = decltype(tag);
    scatter_kernel<T><<<blocks_for(n * D), kThreads, 0, c.stream>>>(
        static_cast<T*>(table.data), static_cast<const T*>(src.data), static_cast<const int64_t*>(idx.data), n, D,
        V, 0, n, c.err_dev, kIndexAdd);
  });
  check_launch("index_add_rows");
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

void CudaBackend::scatter_add_rows(const Desc& gin, const Desc& idx, const Desc& g) {
  const int64_t R = rows_of(gin), C = cols_of(gin), K = cols_of(idx);
  if (R * K == 0) return;
  DeviceContext& c = context(gin.device_index);
  dispatch_all(gin.dtype, "scatter_add_rows", [&](auto tag) {
    using T = decltype(tag);
    scatter_kernel<T><<<blocks_for(R * K), kThreads, 0, c.stream>>>(
        static_cast<T*>(gin.data), static_cast<const T*>(g.data), static_cast<const int64_t*>(idx.data), R * K, 1, C,
        C, K, c.err_dev, kScatterAdd);
  });
  check_launch("scatter_add_rows");
}

}  // namespace nl::cuda
