#include <stdexcept>

#include "backends/backend.h"
#include "backends/cpu/cpu_backend.h"

namespace nl {
namespace {
Backend*& slot(DeviceType t) {
  static Backend* slots[2] = {nullptr, nullptr};
  return slots[static_cast<int>(t)];
}
}  // namespace

void register_backend(DeviceType t, Backend* b) { slot(t) = b; }

// The CPU backend is compiled into every build (backend_for falls back to it), so it is always there.
bool backend_available(DeviceType t) { return t == DeviceType::CPU || slot(t) != nullptr; }

Backend& backend_for(DeviceType t) {
  if (Backend* b = slot(t)) return *b;
  if (t == DeviceType::CPU) return cpu_backend();
  if (t == DeviceType::CUDA)
    throw std::runtime_error(
        "CUDA backend not available: normlab was built without nvcc or no GPU is present "
        "(rebuild with the CUDA toolkit installed, or use --device cpu)");
  throw std::runtime_error("CPU backend not registered (link the normlab library fully)");
}
}  // namespace nl
