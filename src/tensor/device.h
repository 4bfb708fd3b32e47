#pragma once
// Where a tensor's storage lives: "cpu" or "cuda:N". Ops on tensors of two devices are an error.
#include <string>

namespace nl {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1 };

/// A device: type plus index (cuda:0, cuda:1, ...; always 0 for cpu).
struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  static Device cpu() { return {}; }
  static Device cuda(int i = 0) { return {DeviceType::CUDA, i}; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  /// "cpu" or "cuda:N".
  std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
};

/// Parses "cpu", "cuda", "cuda:N" (N: decimal digits only). Throws std::invalid_argument "invalid device
/// 'cuda:-1': a CUDA device index cannot be negative ..." on a negative index, and "unknown device '...'
/// (use cpu, cuda or cuda:N ...)" on anything else (e.g. "gpu", "cuda:x", "cuda:1x").
Device parse_device(const std::string& s);

}  // namespace nl
