// libFuzzer target: the IDX reader (src/data/idx.cpp), plain and gzip-compressed (see file_bytes).
// Contract checked: any input either loads with consistent sizes or throws std::runtime_error.
#include <cstdlib>
#include <stdexcept>

#include "data/idx.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static nlfuzz::ScratchFile file("idx");
  const auto& p = file.write(nlfuzz::file_bytes(data, size));
  try {
    nl::IdxImages img = nl::read_idx_images(p);
    if (img.count < 1 || img.rows < 1 || img.cols < 1 ||
        img.pixels.size() != static_cast<size_t>(img.count * img.rows * img.cols))
      std::abort();
  } catch (const std::runtime_error&) {
  }
  try {
    auto labels = nl::read_idx_labels(p, 10);
    for (uint8_t l : labels)
      if (l >= 10) std::abort();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
