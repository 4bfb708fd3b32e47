// The exported entry of the CUDA module libnormlab_cuda.so (see cuda_plugin_abi.h): the table of its
// entry points, checked by the loader (backends/cuda_loader.cpp) against the build id it was
// configured with. Every other symbol of the module is hidden.
#include <string>

#include "backends/cuda/cuda_entry.h"
#include "backends/cuda/cuda_plugin_abi.h"

#ifndef NORMLAB_BUILD_ID
#error "NORMLAB_BUILD_ID must be defined (cmake/cuda.cmake)"
#endif

namespace {
const char* status_cstr() {
  static thread_local std::string s;
  s = nl::cuda::device_status();
  return s.c_str();
}
const nl::cuda::PluginTable kTable{NORMLAB_BUILD_ID, &nl::cuda::backend, &nl::cuda::device_count, &status_cstr,
                                   &nl::cuda::allocator_stats};
}  // namespace

extern "C" __attribute__((visibility("default"))) const nl::cuda::PluginTable* normlab_cuda_plugin_v1() {
  return &kTable;
}
