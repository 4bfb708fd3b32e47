// BlockPool, the caching allocator with block splitting behind the CUDA backend, on host memory: blocks
// never overlap and stay inside their segments, variable-size requests reuse the reserved segments (no
// new device allocation after warm-up), freed neighbours merge back into whole segments, and an
// out-of-memory device gets the free segments back before the retry.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "backends/block_pool.h"

using nl::BlockPool;

namespace {
/// Host "device" memory with a budget; records the live segments.
struct FakeDeviceMemory {
  size_t budget = SIZE_MAX, used = 0;
  int allocs = 0, frees = 0;
  std::map<char*, size_t> segments;
  BlockPool pool{[this](size_t n) -> void* {
                   if (used + n > budget) return nullptr;
                   char* p = static_cast<char*>(std::malloc(n));
                   segments[p] = n;
                   used += n;
                   ++allocs;
                   return p;
                 },
                 [this](void* p) {
                   used -= segments.at(static_cast<char*>(p));
                   segments.erase(static_cast<char*>(p));
                   std::free(p);
                   ++frees;
                 }};
  ~FakeDeviceMemory() { pool.release_cached(); }
  bool inside_a_segment(char* p, size_t n) const {
    auto it = segments.upper_bound(p);
    if (it == segments.begin()) return false;
    --it;
    return p >= it->first && p + n <= it->first + it->second;
  }
};
}  // namespace

TEST_CASE("block pool: variable sizes reuse split segments, blocks never overlap", "[kernels][allocator]") {
  FakeDeviceMemory mem;
  std::mt19937 rng(5);
  std::uniform_int_distribution<size_t> small(1, 300000), large(1 << 20, 12 << 20);
  std::map<char*, size_t> live;
  auto check_disjoint = [&] {
    char* end = nullptr;
    for (const auto& [p, n] : live) {
      REQUIRE(p >= end);
      REQUIRE(mem.inside_a_segment(p, n));
      end = p + n;
    }
  };
  int allocs_after_warmup = 0;
  for (int step = 0; step < 60; ++step) {
    // One "training step": ~40 tensors whose sizes vary with the batch, freed at the end of the step.
    std::vector<char*> step_blocks;
    const double scale = 0.5 + 0.5 * (step % 7) / 6.0;  // sequence lengths vary between steps
    for (int i = 0; i < 40; ++i) {
      const size_t n = (size_t)((i % 8 == 0 ? large(rng) : small(rng)) * scale) + 1;
      char* p = static_cast<char*>(mem.pool.allocate(n));
      REQUIRE(p != nullptr);
      live[p] = n;
      step_blocks.push_back(p);
    }
    check_disjoint();
    for (char* p : step_blocks) {
      mem.pool.free(p);
      live.erase(p);
    }
    if (step == 6) allocs_after_warmup = mem.allocs;  // one pass over every scale
  }
  CHECK(mem.pool.stats().splits > 0);
  CHECK(mem.allocs <= allocs_after_warmup + 2);  // reuse: (almost) no new segments after warm-up
  CHECK(mem.pool.stats().bytes_in_use == 0);
  mem.pool.release_cached();  // every block merged back into whole segments: all go back
  CHECK(mem.frees == mem.allocs);
  CHECK(mem.pool.stats().bytes_reserved == 0);
}

TEST_CASE("block pool: a large free block is split for a smaller request, then merged on free",
          "[kernels][allocator]") {
  FakeDeviceMemory mem;
  void* a = mem.pool.allocate(50u << 20);
  mem.pool.free(a);
  void* b = mem.pool.allocate(30u << 20);  // carved from the 50 MiB segment
  void* c = mem.pool.allocate(15u << 20);  // the rest of it
  CHECK(mem.allocs == 1);
  CHECK(b == a);
  CHECK(static_cast<char*>(c) == static_cast<char*>(a) + (30u << 20));
  CHECK(mem.pool.stats().splits >= 2);
  mem.pool.free(c);
  mem.pool.free(b);
  void* d = mem.pool.allocate(50u << 20);  // merged back: the whole segment again
  CHECK(d == a);
  CHECK(mem.allocs == 1);
  mem.pool.free(d);
  CHECK_THROWS_WITH(mem.pool.free(d), Catch::Contains("not allocated by this pool"));
}

TEST_CASE("block pool: out of device memory returns the free segments and retries", "[kernels][allocator]") {
  FakeDeviceMemory mem;
  mem.budget = 40u << 20;
  void* small = mem.pool.allocate(1000);   // a 2 MiB small segment
  void* big = mem.pool.allocate(30u << 20);
  mem.pool.free(small);
  mem.pool.free(big);
  CHECK(mem.used == (2u << 20) + (30u << 20));
  void* big2 = mem.pool.allocate(36u << 20);  // needs the cached segments given back first
  CHECK(big2 != nullptr);
  CHECK(mem.frees == 2);
  CHECK(mem.pool.allocate(8u << 20) == nullptr);  // truly out of memory: nullptr, the caller throws
  mem.pool.free(big2);
}
