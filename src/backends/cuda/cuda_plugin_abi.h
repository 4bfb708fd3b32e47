#pragma once
// The interface between libnormlab and the CUDA backend module libnormlab_cuda.so. The module holds
// every CUDA kernel and is the only image linked against cudart and cuBLAS; libnormlab opens it with
// dlopen on the first use of a CUDA device (backends/cuda_loader.cpp), so a CPU run maps neither. The
// module exports one C function, normlab_cuda_plugin_v1(), that returns the table below. The table is
// accepted only when its build id equals the loader's: both are compiled in one build folder
// (NORMLAB_BUILD_ID, kept in its CMake cache), so the Backend class layout they share is the same. Kept C++17-clean.
#include <cstddef>
#include <cstdint>

namespace nl {
class Backend;
namespace cuda {
struct AllocatorStats;

/// Entry points of the CUDA module. Every function may throw the exceptions its counterpart in
/// cuda_entry.h documents (both sides share one libstdc++).
struct PluginTable {
  const char* build_id;  ///< NORMLAB_BUILD_ID of the module's build folder; must equal the loader's
  /// The process-wide CUDA backend (constructing it needs no GPU).
  Backend& (*backend)();
  /// Number of CUDA devices (0 when the runtime reports none or fails).
  int (*device_count)();
  /// Why device_count() is 0 (a sentence naming the CUDA error and the fix), or "" when it is not.
  const char* (*device_status)();
  /// Counters of the caching allocator of one device (see cuda_entry.h).
  AllocatorStats (*allocator_stats)(int device_index);
};

}  // namespace cuda
}  // namespace nl

/// Name of the symbol the loader looks up with dlsym.
#define NORMLAB_CUDA_PLUGIN_SYMBOL "normlab_cuda_plugin_v1"
