#pragma once
// BlockPool: the device-independent part of a caching allocator with block splitting (the design of
// PyTorch's CUDACachingAllocator, reduced to one stream): memory is reserved from the device in segments
// and handed out as blocks carved from them. A request takes the best-fitting free block (smallest that
// fits, then lowest address) and splits off the rest when it is large enough to serve another request;
// freed blocks merge with free neighbours of their segment. Variable-size requests (batches of varying
// sequence length) thus reuse the reserved memory instead of calling the device allocator again.
// Requests round up to 512 bytes. Small requests (<= 1 MiB) share 2 MiB segments; requests up to 10 MiB
// get 20 MiB segments; larger ones a segment rounded up to 2 MiB. Small and large blocks live in separate
// pools, so small tensors do not fragment the large segments. Not thread-safe (the caller locks).
// Used by the CUDA backend (cuda_allocator.cpp); tested on the host (tests/backends/test_block_pool.cpp).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <unordered_map>

namespace nl {

class BlockPool {
 public:
  /// raw_alloc(bytes) returns device memory or nullptr when the device is out of memory; raw_free(p)
  /// returns a segment that raw_alloc gave.
  BlockPool(std::function<void*(size_t)> raw_alloc, std::function<void(void*)> raw_free);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  /// A block of at least `nbytes` (nbytes 0 gets 512), or nullptr when the device is out of memory even
  /// after the free segments were returned to it.
  void* allocate(size_t nbytes);
  /// Returns a block from allocate(); throws std::invalid_argument for a pointer it did not hand out.
  void free(void* p);
  /// Returns every segment that holds no allocated block to the device (raw_free).
  void release_cached();

  /// Counters (bytes are the rounded block / segment sizes).
  struct Stats {
    size_t bytes_in_use = 0;     ///< allocated blocks
    size_t bytes_reserved = 0;   ///< all segments (in use + free)
    uint64_t segment_allocs = 0; ///< raw_alloc calls that succeeded
    uint64_t splits = 0;         ///< blocks split to serve a smaller request
  };
  const Stats& stats() const { return stats_; }

  static constexpr size_t kRound = 512, kSmallSize = 1 << 20, kSmallSegment = 2 << 20, kMidSize = 10 << 20,
                          kMidSegment = 20 << 20, kLargeRound = 2 << 20;

 private:
  struct Block {
    char* ptr;
    size_t size;
    bool allocated = false, small = false;
    Block *prev = nullptr, *next = nullptr;  ///< neighbours in the same segment
  };
  struct BySize {
    bool operator()(const Block* a, const Block* b) const {
      return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
    }
  };
  std::set<Block*, BySize>& pool(bool small) { return small ? small_ : large_; }

  std::function<void*(size_t)> raw_alloc_;
  std::function<void(void*)> raw_free_;
  std::set<Block*, BySize> small_, large_;          ///< free blocks
  std::unordered_map<void*, Block*> allocated_;     ///< handed-out blocks by address
  Stats stats_;
};

}  // namespace nl
