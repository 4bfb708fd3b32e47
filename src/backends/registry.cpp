// Backend lookup. The built-in backends are reached through direct calls (cpu_backend(), and
// cuda::backend() when NORMLAB_WITH_CUDA), so a static link of libnormlab keeps them: nothing depends on
// a static initialiser in a translation unit that the linker could drop. cuda::backend() opens the CUDA
// module (libnormlab_cuda.so, backends/cuda_loader.cpp) on first use; backend_built() does not.
#include <atomic>
#include <mutex>
#include <stdexcept>

#include "backends/backend.h"
#include "backends/mixed_precision.h"
#include "backends/cpu/cpu_backend.h"
#ifdef NORMLAB_WITH_CUDA
#include "backends/cuda/cuda_entry.h"
#endif

namespace nl {
namespace {
Backend*& slot(DeviceType t) {
  static Backend* slots[2] = {nullptr, nullptr};
  return slots[static_cast<int>(t)];
}
std::atomic<bool>& tf32_flag() {
  static std::atomic<bool> on{false};
  return on;
}
Backend* builtin(DeviceType t) {
  if (t == DeviceType::CPU) return &cpu_backend();
#ifdef NORMLAB_WITH_CUDA
  if (t == DeviceType::CUDA) {
    // The module keeps its own copy of backend-layer globals, so the setting travels on the object:
    // given once when the module is first reached (set_allow_tf32 forwards later changes).
    static std::once_flag given;
    Backend& b = cuda::backend();
    std::call_once(given, [&] { b.set_allow_tf32(allow_tf32()); });
    return &b;
  }
#endif
  return nullptr;
}
}  // namespace

void set_allow_tf32(bool on) {
  tf32_flag().store(on, std::memory_order_relaxed);
  if (Backend* b = slot(DeviceType::CUDA)) b->set_allow_tf32(on);
#ifdef NORMLAB_WITH_CUDA
  if (!cuda::module_path().empty()) builtin(DeviceType::CUDA)->set_allow_tf32(on);  // loaded already
#endif
}
bool allow_tf32() { return tf32_flag().load(std::memory_order_relaxed); }

void register_backend(DeviceType t, Backend* b) { slot(t) = b; }

bool backend_built(DeviceType t) { return slot(t) != nullptr || builtin(t) != nullptr; }

int device_count(DeviceType t) {
  if (t == DeviceType::CPU) return 1;
  if (slot(t)) return 1;
#ifdef NORMLAB_WITH_CUDA
  if (t == DeviceType::CUDA) return cuda::device_count();
#endif
  return 0;
}

bool backend_available(DeviceType t) { return device_count(t) > 0; }

Backend& backend_for(DeviceType t) {
  if (Backend* b = slot(t)) return *b;
  if (Backend* b = builtin(t)) return *b;
  throw std::runtime_error(
      "CUDA backend not available: normlab was built without nvcc "
      "(rebuild with the CUDA toolkit under /usr/local/cuda and -DNORMLAB_CUDA=ON, or use --device cpu)");
}

void check_device(Device d) {
  if (d.is_cpu()) return;
  const int n = device_count(d.type);
  if (n == 0) {
    std::string why = "normlab was built without the CUDA backend (no nvcc at build time)";
#ifdef NORMLAB_WITH_CUDA
    if (!slot(d.type)) why = cuda::device_status();
#endif
    throw std::invalid_argument("no CUDA device: " + why + "; use --device cpu");
  }
  if (d.index < 0 || d.index >= n)
    throw std::invalid_argument("device " + d.str() + " does not exist: " + std::to_string(n) +
                                " CUDA device(s) present (cuda:0 .. cuda:" + std::to_string(n - 1) +
                                "); pick one of them or use --device cpu");
}

std::string device_name(Device d) {
  if (d.is_cpu()) return "";
  check_device(d);
  return backend_for(d.type).device_name(d.index);
}

}  // namespace nl
