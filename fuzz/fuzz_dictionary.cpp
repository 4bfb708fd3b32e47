// libFuzzer target: fairseq dict.txt loading (src/data/text/dictionary.cpp), plain or gzip.
// Contract checked: any input either loads or throws std::runtime_error; a loaded dictionary maps each
// symbol back to its own id.
#include <cstdlib>
#include <stdexcept>

#include "data/text/dictionary.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static nlfuzz::ScratchFile file("dict");
  try {
    auto d = nl::data::Dictionary::load(file.write(nlfuzz::file_bytes(data, size)));
    for (int32_t i = 0; i < d.size(); ++i)
      if (d.index(d.symbol(i)) != i) std::abort();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
