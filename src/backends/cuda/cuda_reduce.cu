// CUDA reductions over the trailing dims (sum, mean, max, min, argmax). Sums and means read the view in
// place when its memory is a contiguous [A, C, B] block with the kept dims C in the middle (as_acb): a
// sum over leading dims (bias gradients, BatchNorm statistics) needs no transposed copy; B == 1 runs the
// tiled column reduction (cuda_reduce.cuh), otherwise each output's A * B elements are split into chunks
// reduced by one block each and added in chunk order (a full reduction runs on up to 1024 blocks, not
// one). Max/min/argmax read a contiguous copy the same way. Deterministic: the split depends on the shape
// only. Sums accumulate in double like the CPU; max/min/argmax follow the CPU's rule: the first NaN wins,
// else the first extreme.
#include <cmath>
#include <optional>
#include <type_traits>
#include <utility>
#include <stdexcept>

#include "backends/composite/scratch.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_launch.cuh"
#include "backends/cuda/cuda_reduce.cuh"
#include "backends/cuda/cuda_rows.cuh"

namespace nl::cuda {
namespace {

template <typename T>
__device__ inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return isnan(v); else return false;
}
// True when candidate (v2, i2) beats (v1, i1) under the CPU's scan order (i < 0: no candidate).
template <typename T>
__device__ inline bool better(T v2, int64_t i2, T v1, int64_t i1, bool mx) {
  if (i2 < 0) return false;
  if (i1 < 0) return true;
  const bool n1 = is_nan(v1), n2 = is_nan(v2);
  if (n1 != n2) return n2;
  if (n1 || v1 == v2) return i2 < i1;
  return mx ? v2 > v1 : v2 < v1;
}

// Block (c, j) of a row reduction reduces elements f in chunk j of the A * B reduced elements of output
// c of a contiguous [A, C, B] layout (element (a, c, b) at (a * C + c) * B + b). With one chunk it writes
// out[c]; otherwise its partial result (psum, or pval / pidx for max/min/argmax, where A == 1) goes to
// slot c * chunks + j for row_final_kernel.
template <typename T, typename TO>
__global__ void row_chunk_kernel(const T* in, TO* out, int64_t A, int64_t C, int64_t B, int64_t chunks,
                                 int64_t per_chunk, ReduceOp op, double* psum, T* pval, int64_t* pidx) {
  __shared__ double ssum[kThreads];
  __shared__ T sval[kThreads];
  __shared__ int64_t sidx[kThreads];
  const int64_t c = blockIdx.x / chunks, j = blockIdx.x % chunks, len = A * B;
  const int64_t f0 = j * per_chunk, f1 = f0 + per_chunk < len ? f0 + per_chunk : len;
  const int tid = threadIdx.x;
  if (op == ReduceOp::Sum || op == ReduceOp::Mean) {
    double acc = 0;
    if (A == 1)
      for (int64_t f = f0 + tid; f < f1; f += blockDim.x) acc += (double)in[c * B + f];
    else
      for (int64_t f = f0 + tid; f < f1; f += blockDim.x) acc += (double)in[((f / B) * C + c) * B + f % B];
    ssum[tid] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s) ssum[tid] += ssum[tid + s];
      __syncthreads();
    }
    if (tid != 0) return;
    if (chunks > 1) psum[blockIdx.x] = ssum[0];
    else out[c] = static_cast<TO>(op == ReduceOp::Mean ? ssum[0] / (double)len : ssum[0]);
    return;
  }
  const bool mx = op != ReduceOp::Min;  // A == 1 here: f is the index within the row
  T best = T(0);
  int64_t bi = -1;
  for (int64_t f = f0 + tid; f < f1; f += blockDim.x)
    if (better(in[c * B + f], f, best, bi, mx)) {
      best = in[c * B + f];
      bi = f;
    }
  sval[tid] = best;
  sidx[tid] = bi;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s && better(sval[tid + s], sidx[tid + s], sval[tid], sidx[tid], mx)) {
      sval[tid] = sval[tid + s];
      sidx[tid] = sidx[tid + s];
    }
    __syncthreads();
  }
  if (tid != 0) return;
  if (chunks > 1) {
    pval[blockIdx.x] = sval[0];
    pidx[blockIdx.x] = sidx[0];
  } else {
    out[c] = op == ReduceOp::ArgMax ? static_cast<TO>(sidx[0]) : static_cast<TO>(sval[0]);
  }
}
// Pass 2 of a split row reduction: output c combines its chunks' partials in chunk order.
template <typename T, typename TO>
__global__ void row_final_kernel(TO* out, int64_t C, int64_t chunks, double count, ReduceOp op, const double* psum,
                                 const T* pval, const int64_t* pidx) {
  NL_GRID_LOOP(c, C) {
    if (op == ReduceOp::Sum || op == ReduceOp::Mean) {
      double s = 0;
      for (int64_t j = 0; j < chunks; ++j) s += psum[c * chunks + j];
      out[c] = static_cast<TO>(op == ReduceOp::Mean ? s / count : s);
      continue;
    }
    const bool mx = op != ReduceOp::Min;
    T best = T(0);
    int64_t bi = -1;
    for (int64_t j = 0; j < chunks; ++j)
      if (better(pval[c * chunks + j], pidx[c * chunks + j], best, bi, mx)) {
        best = pval[c * chunks + j];
        bi = pidx[c * chunks + j];
      }
    out[c] = op == ReduceOp::ArgMax ? static_cast<TO>(bi) : static_cast<TO>(best);
  }
}
template <typename T, typename TO>
struct ColumnLoad {  // f(r, c) = x[r, c] of a contiguous [A, C] layout
  const T* x;
  int64_t C;
  __device__ void operator()(int64_t r, int64_t c, double (&v)[1]) const { v[0] = (double)x[r * C + c]; }
};
template <typename TO>
struct ColumnStore {  // out[c] = sum (or sum / count)
  TO* out;
  double scale;
  __device__ void operator()(int, int64_t c, double s) const { out[c] = static_cast<TO>(s * scale); }
};

/// The reduction as a contiguous [A, C, B] layout over memory: C = the kept dims (their memory order equal
/// to their logical order, adjacent), A and B = the reduced dims before and after them in memory. False
/// when the view has gaps or broadcast dims, or the kept dims are split or permuted.
bool as_acb(const Desc& in, int nreduce, int64_t& A, int64_t& C, int64_t& B) {
  struct Dim { int64_t size, stride; bool reduced; int pos; };
  Dim d[kMaxDims];
  int n = 0;
  for (int i = 0; i < in.ndim; ++i)
    if (in.shape[i] != 1) d[n++] = {in.shape[i], in.strides[i], i >= in.ndim - nreduce, i};
  for (int i = 1; i < n; ++i)  // insertion sort by stride, largest first (memory order)
    for (int k = i; k > 0 && d[k].stride > d[k - 1].stride; --k) std::swap(d[k], d[k - 1]);
  int64_t expect = 1;
  for (int i = n - 1; i >= 0; --i) {
    if (d[i].stride != expect) return false;
    expect *= d[i].size;
  }
  A = C = B = 1;
  int phase = 0;  // 0: reduced dims before the kept group, 1: kept group, 2: reduced dims after it
  int last_kept = -1;
  for (int i = 0; i < n; ++i) {
    if (!d[i].reduced) {
      if (phase == 2 || d[i].pos < last_kept) return false;
      phase = 1;
      last_kept = d[i].pos;
      C *= d[i].size;
    } else if (phase == 0) {
      A *= d[i].size;
    } else {
      phase = 2;
      B *= d[i].size;
    }
  }
  return true;
}
}  // namespace

void CudaBackend::reduce(ReduceOp op, const Desc& out, const Desc& in, int nreduce) {
  const int nouter = in.ndim - nreduce;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < nouter; ++i) outer *= in.shape[i];
  for (int i = nouter; i < in.ndim; ++i) inner *= in.shape[i];
  if (inner == 0 && (op == ReduceOp::Max || op == ReduceOp::Min || op == ReduceOp::ArgMax))
    throw std::invalid_argument("max/min/argmax over an empty dimension");
  if (outer == 0) return;
  const int dev = in.device_index;
  if (in.dtype == DType::BFloat16) {  // sums of bfloat16 into float32 (Backend::reduce): through a float32 copy
    if ((op != ReduceOp::Sum && op != ReduceOp::Mean) || out.dtype != DType::Float32)
      throw no_bf16_error(reduce_name(op));  // sums into float32 only (sum_rows)
    composite::Scratch wide(*this, DType::Float32, dev, std::initializer_list<int64_t>{in.numel()});
    const Desc w = composite::dense_like(in, wide.d().data, DType::Float32);
    copy(w, in);
    return reduce(op, out, w, nreduce);
  }
  DeviceContext& c = context(in.device_index);
  const bool sum = op == ReduceOp::Sum || op == ReduceOp::Mean;
  int64_t A = 1, C = outer, B = inner;
  std::optional<composite::Scratch> tmp;  // only for a view the kernels cannot read in place
  const void* src = in.data;
  if (!(sum ? as_acb(in, nreduce, A, C, B) : in.contiguous())) {
    A = 1, C = outer, B = inner;
    tmp.emplace(*this, in.dtype, dev, std::initializer_list<int64_t>{in.numel()});
    const Desc dense = composite::dense_like(in, tmp->d().data, in.dtype);  // in's shape, in the scratch buffer
    copy(dense, in);
    src = dense.data;
  }
  dispatch_all(in.dtype, "reduce", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(src);
    auto run = [&](auto* o) {
      using TO = std::remove_pointer_t<decltype(o)>;
      if (sum && B == 1 && A > 1) {  // a sum over leading dims: the tiled column reduction
        column_sums<1>(*this, dev, c.stream, A, C, ColumnLoad<T, TO>{x, C},
                       ColumnStore<TO>{o, op == ReduceOp::Mean ? 1.0 / (double)A : 1.0});
        return;
      }
      const int64_t len = A * B, chunks = chunk_count(len, C, 2048), per = (len + chunks - 1) / chunks;
      int threads = 32;
      while (threads < kThreads && threads < per) threads *= 2;
      std::optional<composite::Scratch> psum, pval, pidx;
      if (chunks > 1) {
        psum.emplace(*this, DType::Float64, dev, std::initializer_list<int64_t>{C * chunks});
        pval.emplace(*this, in.dtype, dev, std::initializer_list<int64_t>{C * chunks});
        pidx.emplace(*this, DType::Int64, dev, std::initializer_list<int64_t>{C * chunks});
      }
      double* ps = psum ? static_cast<double*>(psum->d().data) : nullptr;
      T* pv = pval ? static_cast<T*>(pval->d().data) : nullptr;
      int64_t* pi = pidx ? static_cast<int64_t*>(pidx->d().data) : nullptr;
      row_chunk_kernel<T, TO><<<(unsigned)(C * chunks), threads, 0, c.stream>>>(x, o, A, C, B, chunks, per, op, ps,
                                                                               pv, pi);
      check_launch("reduce");
      if (chunks > 1) {
        row_final_kernel<T, TO><<<blocks_for(C), kThreads, 0, c.stream>>>(o, C, chunks, (double)len, op, ps, pv, pi);
        check_launch("reduce (pass 2)");
      }
    };
    if (op == ReduceOp::ArgMax) run(static_cast<int64_t*>(out.data));
    else run(static_cast<T*>(out.data));
  });
}

}  // namespace nl::cuda
