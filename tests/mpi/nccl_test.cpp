// normlab_nccl_test: a 1-rank NcclProcessGroup (bootstrapped on a LocalProcessGroup) on the first GPU:
// all-reduce (sum, average) of float32/float64 device buffers of sizes 0, 1 and 7919, broadcast,
// all-gather and barrier leave the values as they must be for one rank. Exit 77 ("NORMLAB_SKIP") without
// a GPU. One GPU allows one NCCL rank (dist-gpu.md §1.4), so this is all a single-GPU machine can test.
#include <cuda_runtime.h>

#include <cstdio>
#include <iostream>
#include <vector>

#include "distributed/nccl/nccl_process_group.h"

namespace {
int failures = 0;

template <class T>
void check(nl::dist::ProcessGroup& pg, size_t n) {
  std::vector<T> host(n), back(n);
  for (size_t i = 0; i < n; ++i) host[i] = (T)((double)(i % 97) * 0.25 - 3);
  T* dev = nullptr;
  T* gathered = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&dev), std::max<size_t>(1, n) * sizeof(T));
  cudaMalloc(reinterpret_cast<void**>(&gathered), std::max<size_t>(1, n) * sizeof(T));
  cudaMemcpy(dev, host.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  pg.all_reduce(std::span<T>(dev, n));
  pg.all_reduce(std::span<T>(dev, n), nl::dist::ReduceOp::Average);
  pg.broadcast(std::span<T>(dev, n), 0);
  pg.all_gather(std::span<const T>(dev, n), std::span<T>(gathered, n));
  pg.barrier();
  cudaMemcpy(back.data(), gathered, n * sizeof(T), cudaMemcpyDeviceToHost);
  if (back != host) {
    ++failures;
    std::cerr << "FAIL: " << (sizeof(T) == 4 ? "float32" : "float64") << " n=" << n << " changed on one rank\n";
  }
  cudaFree(dev);
  cudaFree(gathered);
}
}  // namespace

int main() {
  if (nl::dist::NcclProcessGroup::device_count() == 0) {
    std::cout << "NORMLAB_SKIP: no CUDA device (no driver or no GPU)" << std::endl;
    return 77;
  }
  try {
    nl::dist::LocalProcessGroup boot;
    nl::dist::NcclProcessGroup pg(boot);
    // The spans hold device pointers: NcclProcessGroup never dereferences them on the host.
    for (size_t n : {size_t(0), size_t(1), size_t(7919)}) {
      check<float>(pg, n);
      check<double>(pg, n);
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << std::endl;
    return 1;
  }
  std::printf("nccl one rank: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
