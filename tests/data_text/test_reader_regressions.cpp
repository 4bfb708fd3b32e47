// Inputs found by fuzzing (fuzz/, scripts/fuzz.sh) or by reviewing the readers for it: each once made a
// reader crash, hang, over-allocate or throw an undocumented exception; now each gives a clear error.
#include <catch2/catch.hpp>

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "data/text/classification.h"
#include "data/text/dictionary.h"
#include "data/text/line_reader.h"
#include "data/text/token_dataset.h"
#include "data/text/zip_archive.h"
#include "data_text/temp_dir.h"

using namespace nl::data;
using Catch::Matchers::Contains;

namespace {
std::string le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += char(v >> (8 * i) & 0xff);
  return s;
}
}  // namespace

TEST_CASE("token dataset: a sequence count near 2^63 does not overflow the size check", "[data][tokens][fuzz]") {
  nltest::TempDir t("reg_tok");
  // N = 2^63 - 1, T = 0 in a 64-byte file: 64 + (N + 1)·8 wrapped to 64, so the file "matched" and the
  // offset scan ran off the mapping.
  std::string h = std::string("NLTOKDS1", 8) + le(1, 4) + le(4, 4) + le(std::numeric_limits<int64_t>::max(), 8) +
                  le(0, 8) + le(0, 8) + std::string(24, '\0');
  REQUIRE(h.size() == 64);
  CHECK_THROWS_WITH(TokenDataset(t.write("n.bin", h + le(0, 8))),
                    Contains("n.bin") && Contains("do not fit in the file's 72 bytes"));
  // T too large for the file.
  std::string h2 = std::string("NLTOKDS1", 8) + le(1, 4) + le(4, 4) + le(0, 8) + le(uint64_t(1) << 61, 8) + le(0, 8) +
                   std::string(24, '\0');
  CHECK_THROWS_WITH(TokenDataset(t.write("t.bin", h2 + le(0, 8))), Contains("do not fit"));
}

TEST_CASE("SST readers: labels too large for an integer are errors naming file and line", "[data][sst][fuzz]") {
  nltest::TempDir t("reg_sst");
  // std::stol / std::stoi threw std::out_of_range ("stol") here.
  CHECK_THROWS_WITH(read_label_sentence_file(t.write("s.txt", "1 ||| ok\n99999999999999999999 ||| big\n"), 5),
                    Contains("s.txt:2") && Contains("label 99999999999999999999 outside [0, 5)"));
  CHECK_THROWS_AS(parse_sst_tree("(99999999999 (2 a))"), std::invalid_argument);
  CHECK_THROWS_WITH(read_sst_tree_file(t.write("t.txt", "(99999999999 (2 a))\n"), 5),
                    Contains("t.txt:1") && Contains("node label 99999999999 is too large"));
}

TEST_CASE("dict.txt: a count beyond 64 bits is an error, not silently clamped", "[data][dict][fuzz]") {
  nltest::TempDir t("reg_dict");
  CHECK_THROWS_WITH(Dictionary::load(t.write("dict.txt", "a 5\nb 99999999999999999999\n")),
                    Contains("dict.txt:2") && Contains("out of the 64-bit integer range"));
  CHECK(Dictionary::load(t.write("ok.txt", "a 5\nb -3\n")).count(5) == -3);
}

namespace {
// A zip archive with one member "x" (deflated: method 8) holding `comp`, recording `usize` uncompressed
// bytes, whose central-directory entry points at the local header at `local_offset` (0: the real one).
std::string zip_one(const std::string& comp, uint32_t usize, uint32_t local_offset = 0) {
  std::string common = le(20, 2) + le(0, 2) + le(8, 2) + le(0, 4) + le(0, 4) + le(comp.size(), 4) + le(usize, 4) +
                       le(1, 2) + le(0, 2);
  std::string zip = le(0x04034b50, 4) + common + "x" + comp;
  const std::size_t cd = zip.size();
  std::string central =
      le(0x02014b50, 4) + le(20, 2) + common + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(local_offset, 4) + "x";
  return zip + central + le(0x06054b50, 4) + le(0, 4) + le(1, 2) + le(1, 2) + le(central.size(), 4) + le(cd, 4) + le(0, 2);
}
}  // namespace

TEST_CASE("zip: a member recording an impossible uncompressed size is not allocated", "[data][zip][fuzz]") {
  nltest::TempDir t("reg_zip");
  // 2 compressed bytes (an empty final fixed-Huffman block) recording 4 GiB - 2 uncompressed bytes: the
  // reader used to allocate the recorded size before inflating.
  CHECK_THROWS_WITH(read_zip(t.write("a.zip", zip_one(std::string("\x03\x00", 2), 0xFFFFFFFEu))),
                    Contains("a.zip") && Contains("records 4294967294 uncompressed bytes from only 2 compressed"));
}

TEST_CASE("zip: a local-header offset near 2^32 is corrupt, not a wild read", "[data][zip][fuzz]") {
  nltest::TempDir t("reg_zip2");
  // Found by fuzz_zip: offset + 30 wrapped in 32-bit arithmetic, passed the bounds check, and the reader
  // read 4 GiB past the buffer (SEGV).
  CHECK_THROWS_WITH(read_zip(t.write("b.zip", zip_one(std::string("\x03\x00", 2), 0, 0xFFFFFFF0u))),
                    Contains("b.zip") && Contains("corrupt local header of x"));
  CHECK(read_zip(t.write("c.zip", zip_one(std::string("\x03\x00", 2), 0))).at(0).data.empty());
}

TEST_CASE("gzip: a stream cut short is an error naming the file in every text reader (issue 29)", "[data][gzip]") {
  // A PTB-like corpus, gzip-compressed and then cut to half its bytes: zlib reads that as a clean end of
  // file (548,878 of 929,589 tokens were trained on silently) unless the reader asks gzerror().
  nltest::TempDir t("reg_gz_cut");
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "the cat sat on mat number " + std::to_string(i) + " <unk>\n";
  const auto whole = t.path / "ptb.train.txt.gz";
  {
    gzFile f = gzopen(whole.c_str(), "wb");
    REQUIRE(f);
    REQUIRE(gzwrite(f, text.data(), (unsigned)text.size()) == (int)text.size());
    gzclose(f);
  }
  std::string bytes;
  {
    std::ifstream in(whole, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // The whole file reads back exactly.
  CHECK(read_text(whole) == text);
  CHECK(read_lines(whole).size() == 20000);
  const auto cut = t.write("cut.txt.gz", bytes.substr(0, bytes.size() / 2));
  CHECK_THROWS_WITH(read_text(cut), Contains("cut.txt.gz") && Contains("truncated"));
  CHECK_THROWS_WITH(read_lines(cut), Contains("cut.txt.gz") && Contains("truncated"));
  LineReader r(cut);
  std::string line;
  CHECK_THROWS_WITH([&] { while (r.next(line)) {} }(), Contains("cut.txt.gz") && Contains("truncated"));
}
