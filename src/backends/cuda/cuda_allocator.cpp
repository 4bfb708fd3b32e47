// Caching device allocator: freed blocks go to per-device, per-size-class free lists and are handed out
// again, so a training loop stops calling cudaMalloc after its first step (cudaMalloc synchronises the
// device and costs far more than a kernel). Size classes: 512-byte granules up to 4 KiB, then four
// classes per power of two (at most 25% slack), as the CPU allocator. All kernels of a device run on one
// stream, so a block freed by the host can be reused by the next kernel without an event. On
// cudaErrorMemoryAllocation the cache is released and the call retried once.
#include <cuda_runtime.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_entry.h"

namespace nl::cuda {
namespace {

size_t size_class(size_t n) {
  if (n <= 4096) return (n + 511) & ~size_t(511);
  size_t p = 4096;
  while (p * 2 < n) p *= 2;
  const size_t q = p / 4;
  return (n + q - 1) / q * q;
}

struct DevicePool {
  std::unordered_map<size_t, std::vector<void*>> free_lists;
  size_t cached = 0, in_use = 0;
  uint64_t malloc_calls = 0;
};

struct Allocator {
  std::mutex mu;
  std::vector<DevicePool> pools;
  DevicePool& pool(int dev) {
    if (pools.size() <= (size_t)dev) pools.resize((size_t)dev + 1);
    return pools[(size_t)dev];
  }
  void release_cached(int dev) {  // caller holds mu; the device is current
    DevicePool& p = pool(dev);
    cudaStreamSynchronize(context(dev).stream);
    for (auto& [c, v] : p.free_lists)
      for (void* b : v) cudaFree(b);
    p.free_lists.clear();
    p.cached = 0;
  }
};
Allocator& allocator() {
  static auto* a = new Allocator();  // never destroyed: tensors may be freed during static teardown
  return *a;
}
}  // namespace

void* CudaBackend::allocate(size_t nbytes, int dev) {
  context(dev);  // validates the index and makes the device current
  const size_t c = size_class(nbytes);
  Allocator& a = allocator();
  std::lock_guard<std::mutex> l(a.mu);
  DevicePool& p = a.pool(dev);
  auto it = p.free_lists.find(c);
  if (it != p.free_lists.end() && !it->second.empty()) {
    void* b = it->second.back();
    it->second.pop_back();
    p.cached -= c;
    p.in_use += c;
    return b;
  }
  void* b = nullptr;
  ++p.malloc_calls;
  cudaError_t e = cudaMalloc(&b, c);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error before retrying
    a.release_cached(dev);
    ++p.malloc_calls;
    e = cudaMalloc(&b, c);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("out of memory on cuda:" + std::to_string(dev) + ": could not allocate " +
                             std::to_string(c) + " bytes (" + std::to_string(p.in_use) +
                             " bytes in use; " + cudaGetErrorString(e) + "); use a smaller batch or model");
  }
  p.in_use += c;
  return b;
}

void CudaBackend::deallocate(void* b, size_t nbytes, int dev) {
  const size_t c = size_class(nbytes);
  Allocator& a = allocator();
  std::lock_guard<std::mutex> l(a.mu);
  DevicePool& p = a.pool(dev);
  p.in_use -= c;
  p.free_lists[c].push_back(b);
  p.cached += c;
}

size_t CudaBackend::bytes_cached() const {
  Allocator& a = allocator();
  std::lock_guard<std::mutex> l(a.mu);
  size_t n = 0;
  for (const DevicePool& p : a.pools) n += p.cached + p.in_use;
  return n;
}

AllocatorStats allocator_stats(int dev) {
  if (dev < 0) throw std::invalid_argument("allocator_stats: device index " + std::to_string(dev) + " < 0");
  Allocator& a = allocator();
  std::lock_guard<std::mutex> l(a.mu);
  const DevicePool& p = a.pool(dev);
  return {p.in_use, p.in_use + p.cached, p.malloc_calls};
}

}  // namespace nl::cuda
