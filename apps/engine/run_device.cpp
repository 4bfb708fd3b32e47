#include "engine/run_device.h"

#include <stdexcept>

#include "backends/backend.h"

namespace nlapp {
namespace {
nl::Device& current() {
  static nl::Device d = nl::Device::cpu();
  return d;
}
}  // namespace

void set_run_device(nl::Device d) { current() = d; }

nl::Device run_device() { return current(); }

nl::Device settings_device(const nlohmann::json& settings) {
  if (!settings.is_object() || !settings.contains("device")) return nl::Device::cpu();
  const nlohmann::json& v = settings["device"];
  if (!v.is_string())
    throw std::invalid_argument("setting 'device' must be a string such as \"cpu\" or \"cuda:0\" (got " + v.dump() + ")");
  const nl::Device d = nl::parse_device(v.get<std::string>());
  nl::check_device(d);  // "no CUDA device: ... use --device cpu"
  return d;
}

void to_device(TaskBatch& batch, nl::Device device) {
  for (nl::Tensor* t : batch.tensors())
    if (t && t->defined()) *t = t->to(device);
}

}  // namespace nlapp
