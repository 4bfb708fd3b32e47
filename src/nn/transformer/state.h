#pragma once
// What the Transformer's encoder hands to its decoder, and the decoder's cache for incremental decoding.
#include <cstdint>
#include <vector>

#include "autograd/variable.h"

namespace nl {

/// The encoder's output for the decoder: states [B, S, D] and the source padding mask [B, S] (1 = pad).
struct EncoderOut {
  Variable out;
  Tensor padding_mask;
  /// Keeps rows `order` (int64 [B']) of both (beam search reordering).
  EncoderOut index_select(const Tensor& order) const;
};

/// Cached keys/values of every decoder layer for incremental decoding (one entry per attention).
/// Self-attention caches grow by one step per call; encoder-attention caches are computed once.
class IncrementalState {
 public:
  /// Keeps batch rows `order` (int64 [B']) of every cache (beam search reordering).
  void reorder(const Tensor& order);
  /// Number of decoding steps cached so far.
  int64_t steps() const { return steps_; }
  // Implementation detail for the layers: per-attention cached k, v [B, H, T, dh].
  struct Entry {
    Tensor k, v;
  };
  std::vector<Entry> entries;
  int64_t steps_ = 0;
};

}  // namespace nl
