// libFuzzer target: the classification readers of src/data/text/classification.cpp — SST-5
// "LABEL ||| sentence" files, SST PTB-style tree files (plain or gzip), and parse_sst_tree on the raw
// bytes. Contract checked: file readers throw only std::runtime_error, parse_sst_tree only
// std::invalid_argument; returned labels lie in [0, 5).
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "data/text/classification.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static nlfuzz::ScratchFile file("sst");
  const auto& p = file.write(nlfuzz::file_bytes(data, size));
  for (bool trees : {false, true}) {
    try {
      auto s = trees ? nl::data::read_sst_tree_file(p, 5) : nl::data::read_label_sentence_file(p, 5);
      if (s.sentences.size() != s.labels.size()) std::abort();
      for (int32_t l : s.labels)
        if (l < 0 || l >= 5) std::abort();
    } catch (const std::runtime_error&) {
    }
  }
  try {
    (void)nl::data::parse_sst_tree(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
