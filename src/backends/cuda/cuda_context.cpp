// Device contexts (stream, cuBLAS handle, error record), the device count, synchronisation with the
// report of errors found by kernels, and the process-wide CudaBackend.
#include "backends/cuda/cuda_context.h"

#include <cublas_v2.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_entry.h"

namespace nl::cuda {

namespace {
const char* op_name(int op) {
  switch (op) {
    case kIndexSelect: return "index_select_rows (embedding / index_select)";
    case kIndexAdd: return "index_add_rows (embedding backward)";
    case kGather: return "gather_rows (gather)";
    case kScatterAdd: return "scatter_add_rows (gather backward)";
    case kCrossEntropy: return "cross_entropy (target)";
  }
  return "unknown kernel";
}

struct Contexts {
  std::mutex mu;
  std::vector<std::unique_ptr<DeviceContext>> by_index;
};
Contexts& contexts() {
  static auto* c = new Contexts();  // never destroyed: tensors may be freed during static teardown
  return *c;
}
}  // namespace

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::string msg = std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
  if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) msg += "; " + no_kernel_image_hint();
  throw std::runtime_error(msg);
}

std::string no_kernel_image_hint() {
  int dev = 0, major = 0, minor = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  const std::string sm = std::to_string(major * 10 + minor);
  std::string built = NORMLAB_CUDA_ARCHITECTURES;  // CMake's list with ',' for ';'
  for (char& ch : built)
    if (ch == ',') ch = ';';
  return "normlab's CUDA kernels were built for CMAKE_CUDA_ARCHITECTURES=" + built + " but cuda:" +
         std::to_string(dev) + " has compute capability " + std::to_string(major) + "." + std::to_string(minor) +
         " (sm_" + sm + "), for which no kernel image fits; rebuild with -DCMAKE_CUDA_ARCHITECTURES=\"" + built + ";" +
         sm + "\" (or just " + sm + ")";
}

namespace {
struct Probe {
  int count = 0;
  cudaError_t error = cudaSuccess;
};
const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    int c = 0;
    // The count is left unwritten when the call fails (no driver / no GPU): treat that as 0.
    r.error = cudaGetDeviceCount(&c);
    r.count = r.error == cudaSuccess ? c : 0;
    cudaGetLastError();  // do not leave the error sticky for the next launch check
    return r;
  }();
  return p;
}
}  // namespace

int device_count() { return probe().count; }

std::string device_status() {
  const Probe& p = probe();
  if (p.count > 0) return "";
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  switch (p.error) {
    case cudaSuccess:
    case cudaErrorNoDevice:
      return "the NVIDIA driver reports no GPU (cudaErrorNoDevice)";
    case cudaErrorInsufficientDriver:
      if (drv == 0)  // the runtime reports this code when no driver (libcuda.so) is installed at all
        return "no NVIDIA driver is installed (cudaErrorInsufficientDriver, no libcuda.so): this machine has no usable GPU";
      return "the NVIDIA driver is older than the CUDA " + ver(rt) + " runtime normlab was built with "
             "(cudaErrorInsufficientDriver, the driver supports CUDA " + ver(drv) +
             "): update the driver (CUDA 13 needs R580 or newer) or rebuild normlab with an older CUDA toolkit";
    default:
      return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(p.error) + " (" +
             cudaGetErrorName(p.error) + "); no driver is installed, or it is not usable here";
  }
}

DeviceContext& context(int index) {
  const int n = device_count();
  if (index < 0 || index >= n)
    throw std::invalid_argument(n == 0 ? std::string("no CUDA device: the driver reports no GPU; use --device cpu")
                                       : "device cuda:" + std::to_string(index) + " does not exist (" +
                                             std::to_string(n) + " CUDA device(s)); use cuda:0 .. cuda:" +
                                             std::to_string(n - 1) + " or --device cpu");
  thread_local int current = -1;
  if (current != index) {
    check(cudaSetDevice(index), "cudaSetDevice");
    current = index;
  }
  Contexts& cs = contexts();
  std::lock_guard<std::mutex> l(cs.mu);
  if (cs.by_index.empty()) cs.by_index.resize((size_t)n);
  auto& slot = cs.by_index[(size_t)index];
  if (!slot) {
    check(probe_kernel_image(), "loading normlab's kernels");  // no image for this GPU: name the fix now
    auto c = std::make_unique<DeviceContext>();
    c->index = index;
    check(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed on cuda:" + std::to_string(index));
    cublasSetStream(h, c->stream);
    c->blas = h;
    check(cudaHostAlloc(reinterpret_cast<void**>(&c->err_host), sizeof(ErrorRecord), cudaHostAllocMapped),
          "cudaHostAlloc (error record)");
    *c->err_host = ErrorRecord{kNoError, 0, 0};
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&c->err_dev), c->err_host, 0), "cudaHostGetDevicePointer");
    slot = std::move(c);
  }
  return *slot;
}

void sync_and_check(DeviceContext& c) {
  check(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize");
  volatile ErrorRecord* r = c.err_host;
  if (r->op == kNoError) return;
  const ErrorRecord e{r->op, r->index, r->bound};
  r->op = kNoError;
  throw std::out_of_range(std::string(op_name(e.op)) + " on cuda:" + std::to_string(c.index) + ": index " +
                          std::to_string(e.index) + " out of range [0, " + std::to_string(e.bound) +
                          ") (found by the kernel, reported at synchronisation; check the ids against the "
                          "table / class count)");
}

Backend& backend() {
  static CudaBackend* b = new CudaBackend();  // never destroyed (see contexts())
  return *b;
}

std::string CudaBackend::device_name(int device_index) const {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, device_index), "cudaGetDeviceProperties");
  char mem[32];
  std::snprintf(mem, sizeof mem, "%.1f", (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
  return std::string(p.name) + " (sm_" + std::to_string(p.major * 10 + p.minor) + ", " + mem + " GiB)";
}

void CudaBackend::synchronize(int device_index) { sync_and_check(context(device_index)); }

void CudaBackend::copy_to_host(void* dst, const void* src, size_t n, int device_index) {
  DeviceContext& c = context(device_index);
  if (n) check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, c.stream), "cudaMemcpyAsync (to host)");
  sync_and_check(c);
}

void CudaBackend::copy_from_host(void* dst, const void* src, size_t n, int device_index) {
  DeviceContext& c = context(device_index);
  if (!n) return;
  check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, c.stream), "cudaMemcpyAsync (from host)");
  check(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize");  // `src` may be reused on return
}

}  // namespace nl::cuda
