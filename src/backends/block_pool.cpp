#include "backends/block_pool.h"

#include <stdexcept>
#include <vector>

namespace nl {
namespace {
size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }
}  // namespace

BlockPool::BlockPool(std::function<void*(size_t)> raw_alloc, std::function<void(void*)> raw_free)
    : raw_alloc_(std::move(raw_alloc)), raw_free_(std::move(raw_free)) {}

BlockPool::~BlockPool() {
  // Segments still holding allocated blocks are left to the device (the process is ending); free
  // segments go back.
  release_cached();
}

void* BlockPool::allocate(size_t nbytes) {
  const size_t size = round_up(nbytes == 0 ? 1 : nbytes, kRound);
  const bool small = size <= kSmallSize;
  auto& free_blocks = pool(small);
  Block key{nullptr, size};
  auto it = free_blocks.lower_bound(&key);  // best fit: the smallest free block that holds `size`
  Block* b = nullptr;
  if (it != free_blocks.end()) {
    b = *it;
    free_blocks.erase(it);
  } else {
    const size_t seg = small ? kSmallSegment : size <= kMidSize ? kMidSegment : round_up(size, kLargeRound);
    void* p = raw_alloc_(seg);
    if (!p) {
      release_cached();
      p = raw_alloc_(seg);
      if (!p) return nullptr;
    }
    ++stats_.segment_allocs;
    stats_.bytes_reserved += seg;
    b = new Block{static_cast<char*>(p), seg};
    b->small = small;
  }
  // Split off the remainder when it can serve another request of its pool (large: more than 1 MiB).
  const size_t rest = b->size - size;
  if (small ? rest >= kRound : rest > kSmallSize) {
    Block* r = new Block{b->ptr + size, rest};
    r->small = small;
    r->prev = b;
    r->next = b->next;
    if (b->next) b->next->prev = r;
    b->next = r;
    b->size = size;
    free_blocks.insert(r);
    ++stats_.splits;
  }
  b->allocated = true;
  allocated_[b->ptr] = b;
  stats_.bytes_in_use += b->size;
  return b->ptr;
}

void BlockPool::free(void* p) {
  auto it = allocated_.find(p);
  if (it == allocated_.end()) throw std::invalid_argument("BlockPool::free: pointer was not allocated by this pool");
  Block* b = it->second;
  allocated_.erase(it);
  b->allocated = false;
  stats_.bytes_in_use -= b->size;
  auto& free_blocks = pool(b->small);
  for (Block* n : {b->prev, b->next}) {  // merge with free neighbours of the segment
    if (!n || n->allocated) continue;
    free_blocks.erase(n);
    if (n == b->prev) {
      n->size += b->size;
      n->next = b->next;
      if (b->next) b->next->prev = n;
      delete b;
      b = n;
    } else {
      b->size += n->size;
      b->next = n->next;
      if (n->next) n->next->prev = b;
      delete n;
    }
  }
  free_blocks.insert(b);
}

void BlockPool::release_cached() {
  for (bool small : {true, false}) {
    auto& free_blocks = pool(small);
    std::vector<Block*> whole;
    for (Block* b : free_blocks)
      if (!b->prev && !b->next) whole.push_back(b);  // a free block that is its entire segment
    for (Block* b : whole) {
      free_blocks.erase(b);
      stats_.bytes_reserved -= b->size;
      raw_free_(b->ptr);
      delete b;
    }
  }
}

}  // namespace nl
