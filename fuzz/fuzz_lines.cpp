// libFuzzer target: the line reader (plain or gzip, BOM, CRLF, NUL, UTF-8 validation, Latin-1), read_text,
// parallel text (the input's two halves as source and target files), and the UTF-8 helpers applied to
// every line read (src/data/text/line_reader.cpp, parallel_text.cpp, utf8.cpp). Contract checked: readers
// throw only std::runtime_error; lines hold no '\n' or NUL; validated text round-trips through
// utf8_code_points; Latin-1 decoding and lowercasing of valid UTF-8 give valid UTF-8.
#include <cstdlib>
#include <stdexcept>

#include "data/text/line_reader.h"
#include "data/text/parallel_text.h"
#include "data/text/utf8.h"
#include "fuzz_input.h"

namespace {
using namespace nl::data;

void check_line(const std::string& s) {
  if (s.find('\n') != std::string::npos || s.find('\0') != std::string::npos) std::abort();
  if (!is_valid_utf8(s)) std::abort();
  std::string joined;
  for (const auto& cp : utf8_code_points(s)) joined += cp;
  if (joined != s) std::abort();
  if (!is_valid_utf8(utf8_lower(s))) std::abort();
  for (const auto& w : split_whitespace(s))
    if (w.empty()) std::abort();
  if (!is_valid_utf8(normalize_whitespace(s))) std::abort();
  (void)remove_bpe(s);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static nlfuzz::ScratchFile a("lines-a"), b("lines-b");
  const std::string bytes = nlfuzz::file_bytes(data, size);
  a.write(bytes);
  try {
    for (const auto& l : read_lines(a.path())) check_line(l);
  } catch (const std::runtime_error&) {
  }
  try {
    ReadOptions latin;
    latin.encoding = Encoding::Latin1;
    for (const auto& l : read_lines(a.path(), latin))
      if (!is_valid_utf8(l)) std::abort();
  } catch (const std::runtime_error&) {
  }
  try {
    std::string t = read_text(a.path());
    if (!is_valid_utf8(t)) std::abort();
  } catch (const std::runtime_error&) {
  }
  // Parallel text: the raw input split in two (no gzip mode), one half per side.
  const std::string raw(reinterpret_cast<const char*>(data), size);
  a.write(raw.substr(0, size / 2));
  b.write(raw.substr(size / 2));
  try {
    ParallelCorpus c = read_parallel(a.path(), b.path());
    if (c.source.size() != c.target.size()) std::abort();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
