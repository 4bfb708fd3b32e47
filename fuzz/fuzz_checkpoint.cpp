// libFuzzer target: the checkpoint reader (src/optim/checkpoint.cpp): 8-byte header length, JSON header
// (dtypes, shapes, data_offsets, __metadata__), tensor bytes. Reads from memory (read_checkpoint_bytes).
// Contract checked: any input either loads or throws std::runtime_error.
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "optim/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    nl::Checkpoint ck = nl::read_checkpoint_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    for (const auto& [name, t] : ck.tensors)
      if (!t.defined() || t.numel() < 0) std::abort();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
