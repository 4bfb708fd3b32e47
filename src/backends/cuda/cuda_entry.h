#pragma once
// Entry points of the CUDA backend for code compiled without nvcc (the registry, tests, apps). Only
// linked when normlab is built with NORMLAB_WITH_CUDA. They are implemented by the loader
// (backends/cuda_loader.cpp), which opens the CUDA module libnormlab_cuda.so on first use: nothing here
// maps cudart or cuBLAS until a CUDA device is asked for.
#include <cstddef>
#include <cstdint>
#include <string>

namespace nl {
class Backend;
namespace cuda {

/// The process-wide CUDA backend (loads the CUDA module on first use; constructing it needs no GPU).
/// Throws std::runtime_error naming the paths tried and the fix when libnormlab_cuda.so cannot be
/// loaded (missing, from another build, or cudart/cuBLAS absent).
Backend& backend();
/// Number of CUDA devices the driver reports; 0 when the module cannot be loaded or cudaGetDeviceCount
/// fails (no driver, a driver too old for the runtime, no GPU): device_status() then says why.
int device_count();
/// Why device_count() is 0, as a sentence naming the cause and the fix (e.g. "the NVIDIA driver is
/// older than the CUDA runtime (cudaErrorInsufficientDriver) ..."); "" when a device is present.
std::string device_status();
/// Path of the loaded CUDA module, or "" before it is loaded (does not load it).
std::string module_path();

/// Counters of the caching device allocator of one device.
struct AllocatorStats {
  size_t bytes_in_use = 0;   ///< handed out to tensors (size-class rounded)
  size_t bytes_cached = 0;   ///< in use + free blocks kept for reuse
  uint64_t malloc_calls = 0; ///< cudaMalloc calls so far (flat after warm-up)
  uint64_t splits = 0;       ///< free blocks split to serve a smaller request
};
/// The allocator counters of `device_index`; throws std::invalid_argument for a bad index.
AllocatorStats allocator_stats(int device_index);

}  // namespace cuda
}  // namespace nl
