// Caching device allocator: one BlockPool (backends/block_pool.h) per device over cudaMalloc/cudaFree.
// Freed blocks are kept and handed out again, split to size and merged back on free, so a training loop
// stops calling cudaMalloc after its first steps even when the batch shapes vary (cudaMalloc synchronises
// the device and costs far more than a kernel). All kernels of a device run on one stream, so a block
// freed by the host can be reused by the next kernel without an event. When cudaMalloc fails, the free
// segments are returned to the device and the call is retried once.
#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/block_pool.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_entry.h"

namespace nl::cuda {
namespace {

struct Allocator {
  std::mutex mu;
  std::vector<std::unique_ptr<BlockPool>> pools;
  BlockPool& pool(int dev) {  // caller holds mu
    if (pools.size() <= (size_t)dev) pools.resize((size_t)dev + 1);
    auto& p = pools[(size_t)dev];
    if (!p)
      p = std::make_unique<BlockPool>(
          [dev](size_t n) -> void* {
            void* b = nullptr;
            context(dev);  // makes the device current
            if (cudaMalloc(&b, n) == cudaSuccess) return b;
            cudaGetLastError();  // clear the out-of-memory error before the retry
            return nullptr;
          },
          [dev](void* b) {
            context(dev);
            cudaFree(b);  // synchronises the device: no kernel still uses the block
          });
    return *p;
  }
};
Allocator& allocator() {
  static auto* a = new Allocator();  // never destroyed: tensors may be freed during static teardown
  return *a;
}
}  // namespace

void* CudaBackend::allocate(size_t nbytes, int dev) {
  context(dev);  // validates the index and makes the device current
  Allocator& a = allocator();
  std::lock_guard<std::mutex> l(a.mu);
  BlockPool& p = a.pool(dev);
  void* b = p.allocate(nbytes);
  if (!b)
    throw std::runtime_error("out of memory on cuda:" + std::to_string(dev) + ": could not allocate " +
                             std::to_string(nbytes) + " bytes (" + std::to_string(p.stats().bytes_in_use) +
                             " bytes in use); use a smaller batch or model");
  return b;
}

void CudaBackend::deallocate(void* b, size_t, int dev) {
  Allocator& a = allocator();
  std::lock_guard<std::mutex> l(a.mu);
  a.pool(dev).free(b);
}

size_t CudaBackend::bytes_cached() const {
  Allocator& a = allocator();
  std::lock_guard<std::mutex> l(a.mu);
  size_t n = 0;
  for (const auto& p : a.pools)
    if (p) n += p->stats().bytes_reserved;
  return n;
}

AllocatorStats allocator_stats(int dev) {
  if (dev < 0) throw std::invalid_argument("allocator_stats: device index " + std::to_string(dev) + " < 0");
  Allocator& a = allocator();
  std::lock_guard<std::mutex> l(a.mu);
  const BlockPool::Stats& s = a.pool(dev).stats();
  return {s.bytes_in_use, s.bytes_reserved, s.segment_allocs, s.splits};
}

}  // namespace nl::cuda
