#pragma once
// Strided iteration for CPU elementwise kernels. Operands share one shape (inputs already broadcast
// with stride 0); dims of size 1 are dropped and adjacent dims merged when every operand allows it,
// so the common contiguous case becomes a single flat loop. Rows are split across OpenMP threads.
#include <omp.h>

#include <algorithm>

#include "backends/backend.h"
#include "backends/coalesce.h"
#include "backends/cpu/threads.h"

namespace nl::cpu {
using nl::coalesce;
using nl::Coalesced;
using nl::ref_numel;

/// Calls row(n, ptrs, strides) over all rows of the N operands (ptrs as char*, strides in elements).
/// Element sizes come from each Desc's dtype.
template <int N, typename Row>
void for_each_row(const Desc* const (&d)[N], Row&& row) {
  if (d[0]->numel() == 0) return;  // nothing to do (and no division by a zero extent below)
  Coalesced<N> c = coalesce<N>(d);
  int64_t esz[N];
  for (int k = 0; k < N; ++k) esz[k] = (int64_t)dtype_size(d[k]->dtype);
  const int64_t inner = c.shape[c.ndim - 1];
  const int64_t total = ref_numel(c);
  // A single long row is cut into chunks so it can be split across threads too.
  const int64_t chunk = (c.ndim == 1 && total >= 2 * kParallelGrain) ? kParallelGrain : inner;
  const int64_t chunks_per_row = (inner + chunk - 1) / chunk;
  const int64_t outer = total / std::max<int64_t>(inner, 1);
  const int64_t jobs = outer * chunks_per_row;
#pragma omp parallel for schedule(static) if (total >= kParallelGrain && jobs > 1)
  for (int64_t j = 0; j < jobs; ++j) {
    int64_t o = j / chunks_per_row, part = j % chunks_per_row;
    int64_t off[N] = {};
    int64_t rem = o;
    for (int dd = c.ndim - 2; dd >= 0; --dd) {
      int64_t idx = rem % c.shape[dd];
      rem /= c.shape[dd];
      for (int k = 0; k < N; ++k) off[k] += idx * c.st[k][dd];
    }
    char* p[N];
    int64_t s[N];
    for (int k = 0; k < N; ++k) {
      s[k] = c.st[k][c.ndim - 1];
      p[k] = static_cast<char*>(d[k]->data) + (off[k] + part * chunk * s[k]) * esz[k];
    }
    row(std::min(chunk, inner - part * chunk), p, s);
  }
}

}  // namespace nl::cpu
