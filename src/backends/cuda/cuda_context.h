#pragma once
// Per-device state of the CUDA backend: the stream every kernel of that device runs on, the cuBLAS
// handle bound to it, and the error record kernels write when they meet an index out of range (mapped
// pinned host memory, read after the stream synchronises). CUDA_CHECK turns a CUDA error into
// std::runtime_error naming the call.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace nl::cuda {

/// First asynchronous error of a device since the last synchronisation (op == 0: none).
struct ErrorRecord {
  int op;                ///< ErrorOp of the kernel that found it
  long long index;       ///< the offending index
  long long bound;       ///< the valid range is [0, bound)
};
/// Kernels that check indices on the device.
enum ErrorOp : int { kNoError = 0, kIndexSelect = 1, kIndexAdd = 2, kGather = 3, kScatterAdd = 4, kCrossEntropy = 5 };

/// Stream, cuBLAS handle (void* to keep cublas_v2.h out of .cu files) and error record of one device.
struct DeviceContext {
  int index = 0;
  cudaStream_t stream = nullptr;
  void* blas = nullptr;
  ErrorRecord* err_host = nullptr;  ///< read by the host after synchronising
  ErrorRecord* err_dev = nullptr;   ///< the same memory as the device sees it
};

/// The context of device `index` (created on first use; makes it the current device). Throws
/// std::invalid_argument naming the fix when the device does not exist.
DeviceContext& context(int index);
/// Synchronises the device's stream, then throws std::out_of_range naming the kernel if one recorded
/// an index error (the record is cleared first).
void sync_and_check(DeviceContext& c);

/// Throws std::runtime_error("CUDA error in <what>: <message>") unless e == cudaSuccess; a missing kernel
/// image (cudaErrorNoKernelImageForDevice) adds no_kernel_image_hint().
void check(cudaError_t e, const char* what);
/// "normlab's CUDA kernels were built for CMAKE_CUDA_ARCHITECTURES=... but cuda:N has compute capability
/// X.Y ...; rebuild with -DCMAKE_CUDA_ARCHITECTURES=..." for the current device.
std::string no_kernel_image_hint();
/// cudaFuncGetAttributes of one of normlab's kernels on the current device: cudaErrorNoKernelImageForDevice
/// (or cudaErrorInvalidDeviceFunction) when the module has no code this GPU can run (cuda_elementwise.cu).
cudaError_t probe_kernel_image();
/// Checks the launch of the kernel just enqueued (cudaGetLastError).
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

}  // namespace nl::cuda
