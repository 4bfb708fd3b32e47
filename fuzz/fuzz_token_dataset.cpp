// libFuzzer target: the NLTOKDS1 token binary reader (src/data/text/token_dataset.cpp, memory-mapped).
// The input is the file as is (no gzip mode: the format is never compressed). Contract checked: any
// input either opens or throws std::runtime_error; every sequence of an opened file lies inside the map.
#include <cstdlib>
#include <stdexcept>

#include "data/text/token_dataset.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static nlfuzz::ScratchFile file("tok");
  try {
    nl::data::TokenDataset ds(file.write(std::string(reinterpret_cast<const char*>(data), size)));
    int64_t total = 0, sum = 0;
    for (int64_t i = 0; i < ds.size(); ++i) {
      auto s = ds[i];
      if (ds.length(i) != static_cast<int64_t>(s.size())) std::abort();
      total += static_cast<int64_t>(s.size());
      for (int32_t id : s) sum += id;  // touches every id: reading outside the map would fault
    }
    if (total != ds.num_tokens() || static_cast<int64_t>(ds.all_ids().size()) != total) std::abort();
    (void)sum;
  } catch (const std::runtime_error&) {
  }
  return 0;
}
