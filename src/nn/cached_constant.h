#pragma once
// CachedConstant: a constant tensor a module builds on the host (a mask, a table of positions) kept on
// the device it is used on, rebuilt only when its key (the shape it depends on) or the device changes, so
// that a training step in steady state copies nothing from the host.
#include <string>

#include "tensor/tensor.h"

namespace nl {

/// One cached constant; `make` returns the host tensor for a key.
class CachedConstant {
 public:
  /// The tensor for `key` on `device`: make().to(device) the first time and whenever key or device
  /// changed since the last call, else the kept one. Callers must not write into it.
  template <typename Make>
  const Tensor& get(const std::string& key, Device device, Make make) {
    if (!value_.defined() || key != key_ || device != device_) {
      value_ = make().to(device);
      key_ = key;
      device_ = device;
    }
    return value_;
  }

 private:
  Tensor value_;
  std::string key_;
  Device device_;
};

}  // namespace nl
