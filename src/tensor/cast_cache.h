#pragma once
// The weight-cast cache of mixed precision: a float32 weight's bfloat16 copy is made once per update
// and reused by every product that reads the weight until the weight changes (PyTorch autocast's
// cached_cast). Keyed by the weight's storage, view (offset, shape, strides) and target dtype; valid
// while the storage is alive and its version counter (bumped by every in-place write: the optimizer's
// step, copy_, load_state_dict) is the one the copy was made from. docs/mixed-precision.md.
#include <cstddef>

#include "tensor/tensor.h"

namespace nl {

/// `w` converted to `dtype`, from the cache when the cached copy was made from w's current version
/// (w itself when it already has that dtype). The copy is contiguous and must be treated as read-only.
/// The cache holds one copy per weight view (stale ones are replaced; copies of freed storages are
/// dropped on the next insertion); it is meant for parameters, which live across steps; for
/// activations it would only cost memory. Thread-safe. Throws as Tensor::to.
Tensor cached_cast(const Tensor& w, DType dtype);
/// Drops every cached copy (autocast's outermost scope calls it on exit; tests).
void clear_cast_cache();
/// Cached copies held now, and how many were made since the process started (a miss makes one).
struct CastCacheStats {
  size_t entries = 0;
  size_t bytes = 0;
  size_t casts = 0;
};
/// The cache's current counts.
CastCacheStats cast_cache_stats();

}  // namespace nl
