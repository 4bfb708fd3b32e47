#pragma once
// Dimension coalescing for strided elementwise kernels (CPU loops and CUDA launches): operands share one
// shape (inputs already broadcast with stride 0); dims of extent 1 are dropped and adjacent dims merged
// when every operand allows it, so a contiguous case becomes one flat dim. Header-only, C++17.
#include <cstdint>

#include "backends/desc.h"

namespace nl {

/// Shape and per-operand strides (elements) after coalescing; ndim >= 1.
template <int N>
struct Coalesced {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t st[N][kMaxDims];
};

/// Coalesces the N operands (d[0] gives the shape). A 0-d or all-ones shape becomes [1].
template <int N>
Coalesced<N> coalesce(const Desc* const (&d)[N]) {
  Coalesced<N> c;
  const Desc& ref = *d[0];
  for (int i = 0; i < ref.ndim; ++i) {
    if (ref.shape[i] == 1) continue;
    bool merge = c.ndim > 0;
    for (int k = 0; k < N && merge; ++k)
      merge = c.st[k][c.ndim - 1] == d[k]->strides[i] * ref.shape[i];
    if (merge) {
      c.shape[c.ndim - 1] *= ref.shape[i];
      for (int k = 0; k < N; ++k) c.st[k][c.ndim - 1] = d[k]->strides[i];
    } else {
      c.shape[c.ndim] = ref.shape[i];
      for (int k = 0; k < N; ++k) c.st[k][c.ndim] = d[k]->strides[i];
      ++c.ndim;
    }
  }
  if (c.ndim == 0) {
    c.ndim = 1;
    c.shape[0] = 1;
    for (int k = 0; k < N; ++k) c.st[k][0] = 1;
  }
  return c;
}

/// Number of elements of the coalesced shape.
template <int N>
inline int64_t ref_numel(const Coalesced<N>& c) {
  int64_t n = 1;
  for (int i = 0; i < c.ndim; ++i) n *= c.shape[i];
  return n;
}

}  // namespace nl
