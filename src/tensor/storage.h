#pragma once
// Storage: a block of device memory shared by a tensor and its views, returned to the device's
// caching allocator when the last view goes away. Carries the version counter that autograd uses to
// detect in-place modification of a tensor saved for backward.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "tensor/device.h"

namespace nl {

/// Bytes on one device plus a version counter; owned jointly by a tensor and its views.
class Storage {
 public:
  /// Allocates `nbytes` on `device` through its backend's caching allocator; throws on failure.
  Storage(size_t nbytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  /// Incremented by every in-place write; saved tensors compare it at backward time.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  uint64_t version_ = 0;
};

}  // namespace nl
