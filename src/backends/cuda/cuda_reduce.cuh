#pragma once
// Two-pass reductions of the CUDA backend, deterministic (the split depends on the shape only, never on
// timing or the GPU, and the partial sums are combined in a fixed order) and in double:
//  * column_sums: out_k[c] = sum_r f_k(r, c) over the rows of an [A, C] layout (bias and LayerNorm
//    weight/bias gradients, sums over leading dims). Pass 1: tiles of 32 columns x a chunk of rows, 8
//    row lanes per column, so adjacent threads read adjacent columns; pass 2 adds the chunks' partial sums
//    in chunk order (the tiled two-pass column reduction of PyTorch's / Apex's LayerNorm backward).
//  * chunk_plan / the row kernels in cuda_reduce.cu use the same split along a row (a full reduction
//    runs on up to 1024 blocks, then one pass adds their partials: the two-stage reduction).
#include <cstdint>

#include "backends/composite/scratch.h"
#include "backends/cuda/cuda_launch.cuh"
#include "backends/cuda/cuda_rows.cuh"

namespace nl::cuda {

constexpr int kColTile = 32;   ///< columns per block of the column reduction
constexpr int kColLanes = 8;   ///< row lanes per column
constexpr int64_t kMaxChunks = 1024;

/// Chunks to split `len` reduced elements into when `outputs` outputs share the GPU: enough blocks for
/// a large GPU (~1024) but at least `min_per_chunk` elements per chunk. Depends on the shape only.
inline int64_t chunk_count(int64_t len, int64_t outputs, int64_t min_per_chunk) {
  const int64_t want = (1024 + outputs - 1) / (outputs > 0 ? outputs : 1);
  const int64_t most = (len + min_per_chunk - 1) / min_per_chunk;
  int64_t k = want < most ? want : most;
  if (k > kMaxChunks) k = kMaxChunks;
  return k < 1 ? 1 : k;
}

/// Pass 1 of column_sums: block (tile, chunk) sums rows [chunk * rows_per_chunk, ...) of 32 columns.
/// partial layout: [chunk][k][C].
template <int K, typename F>
__global__ void column_partial_kernel(F f, int64_t A, int64_t C, int64_t rows_per_chunk, double* partial) {
  __shared__ double sh[K][kColLanes][kColTile];
  const int64_t c = (int64_t)blockIdx.x * kColTile + threadIdx.x;
  const int64_t r0 = (int64_t)blockIdx.y * rows_per_chunk;
  const int64_t r1 = r0 + rows_per_chunk < A ? r0 + rows_per_chunk : A;
  double acc[K];
  for (int k = 0; k < K; ++k) acc[k] = 0;
  if (c < C)
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kColLanes) {
      double v[K];
      f(r, c, v);
      for (int k = 0; k < K; ++k) acc[k] += v[k];
    }
  for (int k = 0; k < K; ++k) sh[k][threadIdx.y][threadIdx.x] = acc[k];
  __syncthreads();
  if (threadIdx.y == 0 && c < C)
    for (int k = 0; k < K; ++k) {
      double s = 0;
      for (int l = 0; l < kColLanes; ++l) s += sh[k][l][threadIdx.x];  // lanes in order
      partial[((int64_t)blockIdx.y * K + k) * C + c] = s;
    }
}
/// Pass 2: store(k, c, sum over chunks in order).
template <int K, typename S>
__global__ void column_final_kernel(S store, const double* partial, int64_t chunks, int64_t C) {
  NL_GRID_LOOP(e, K * C) {
    const int k = (int)(e / C);
    const int64_t c = e % C;
    double s = 0;
    for (int64_t j = 0; j < chunks; ++j) s += partial[(j * K + k) * C + c];
    store(k, c, s);
  }
}

/// out_k[c] = sum over r < A of f(r, c)[k] for k < K, c < C, handed to store(k, c, sum) (double sums,
/// deterministic; see the file comment). f: __device__ void (int64_t r, int64_t c, double (&v)[K]).
/// Scratch memory comes from `be` on device `dev`; everything runs on `stream`.
template <int K, typename F, typename S>
void column_sums(Backend& be, int dev, cudaStream_t stream, int64_t A, int64_t C, F f, S store) {
  if (C == 0) return;
  const int64_t tiles = (C + kColTile - 1) / kColTile;
  const int64_t chunks = chunk_count(A, tiles, 64);
  const int64_t rows_per_chunk = (A + chunks - 1) / chunks;
  composite::Scratch partial(be, DType::Float64, dev, {chunks * K * C});
  column_partial_kernel<K><<<dim3((unsigned)tiles, (unsigned)chunks), dim3(kColTile, kColLanes), 0, stream>>>(
      f, A, C, rows_per_chunk, static_cast<double*>(partial.d().data));
  check_launch("column reduction (pass 1)");
  column_final_kernel<K><<<blocks_for(K * C), kThreads, 0, stream>>>(store, static_cast<const double*>(partial.d().data),
                                                                    chunks, C);
  check_launch("column reduction (pass 2)");
}

}  // namespace nl::cuda
