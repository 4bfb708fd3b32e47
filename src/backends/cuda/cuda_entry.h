#pragma once
// Entry points of the CUDA backend for code compiled without nvcc (the registry, tests). Only linked
// when normlab is built with NORMLAB_WITH_CUDA.
#include <cstddef>
#include <cstdint>

namespace nl {
class Backend;
namespace cuda {

/// The process-wide CUDA backend (constructed on first use; constructing it needs no GPU).
Backend& backend();
/// Number of CUDA devices the driver reports; 0 when cudaGetDeviceCount fails (no driver or no GPU).
int device_count();

/// Counters of the caching device allocator of one device.
struct AllocatorStats {
  size_t bytes_in_use = 0;   ///< handed out to tensors (size-class rounded)
  size_t bytes_cached = 0;   ///< in use + free blocks kept for reuse
  uint64_t malloc_calls = 0; ///< cudaMalloc calls so far (flat after warm-up)
};
/// The allocator counters of `device_index`; throws std::invalid_argument for a bad index.
AllocatorStats allocator_stats(int device_index);

}  // namespace cuda
}  // namespace nl
