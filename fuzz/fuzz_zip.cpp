// libFuzzer target: the .zip reader (src/data/text/zip_archive.cpp; NLTK's dependency_treebank.zip for
// `data prepare ptb-dep`). The input is the archive as is. Contract checked: any input either reads or
// throws std::runtime_error, and never allocates more than the deflate ratio allows.
#include <cstdlib>
#include <stdexcept>

#include "data/text/zip_archive.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static nlfuzz::ScratchFile file("zip");
  try {
    (void)nl::data::read_zip(file.write(std::string(reinterpret_cast<const char*>(data), size)));
  } catch (const std::runtime_error&) {
  }
  return 0;
}
