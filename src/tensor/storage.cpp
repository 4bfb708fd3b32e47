#include "tensor/storage.h"

#include "backends/backend.h"

namespace nl {

Storage::Storage(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  data_ = backend_for(device.type).allocate(nbytes, device.index);
}

Storage::~Storage() {
  if (data_) backend_for(device_.type).deallocate(data_, nbytes_, device_.index);
}

}  // namespace nl
