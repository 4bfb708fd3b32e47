#include <catch2/catch.hpp>

#include "data/text/line_reader.h"
#include "data/text/parallel_text.h"
#include "data/text/utf8.h"
#include "data_text/temp_dir.h"
#include "test_paths.h"

using namespace nl::data;

TEST_CASE("utf8: validation accepts valid text and rejects invalid sequences", "[data][utf8]") {
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("Gr\xC3\xBC\xC3\x9F" "e \xE2\x82\xAC \xF0\x9F\x98\x80"));  // Grüße € 😀
  CHECK(find_invalid_utf8("ab\xFF" "cd") == 2);            // never valid byte
  CHECK(find_invalid_utf8("\xC0\xAF") == 0);                // overlong '/'
  CHECK(find_invalid_utf8("\xED\xA0\x80") == 0);            // surrogate U+D800
  CHECK(find_invalid_utf8("ok\xE2\x82") == 2);              // truncated sequence
  CHECK(find_invalid_utf8("\xF4\x90\x80\x80") == 0);        // above U+10FFFF
}

TEST_CASE("utf8: Latin-1 decoding, whitespace, code points, lowercase", "[data][utf8]") {
  CHECK(latin1_to_utf8("caf\xE9") == "caf\xC3\xA9");
  CHECK(split_whitespace("  a\tb  c\n") == std::vector<std::string>{"a", "b", "c"});
  CHECK(normalize_whitespace("  a \t b ") == "a b");
  CHECK(utf8_code_points("a\xC3\xA9z").size() == 3);
  CHECK(utf8_lower("ABC \xC3\x89t\xC3\xA9 \xC4\x90\xE1\xBA\xA0") == "abc \xC3\xA9t\xC3\xA9 \xC4\x91\xE1\xBA\xA1");  // Été ĐẠ
}

TEST_CASE("line reader: BOM removed, CRLF and missing final newline accepted", "[data][lines]") {
  nltest::TempDir t("lines");
  auto p = t.write("a.txt", "\xEF\xBB\xBFone\r\ntwo\n\nfour");
  auto lines = read_lines(p);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "one");
  CHECK(lines[2].empty());
  CHECK(lines[3] == "four");
  CHECK(read_lines(t.write("empty.txt", "")).empty());
}

TEST_CASE("line reader: a missing file and non-UTF-8 bytes give errors naming file and line", "[data][lines][errors]") {
  nltest::TempDir t("lines_err");
  try {
    read_lines(t.path / "nope.txt");
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    CHECK(m.find("nope.txt") != std::string::npos);
    CHECK(m.find("not found") != std::string::npos);
  }
  auto p = t.write("latin.txt", "fine\nstill fine\ncaf\xE9\n");
  try {
    read_lines(p);
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    CHECK(m.find("latin.txt:3") != std::string::npos);
    CHECK(m.find("0xE9") != std::string::npos);
    CHECK(m.find("Latin-1") != std::string::npos);
  }
  ReadOptions o;
  o.encoding = Encoding::Latin1;
  CHECK(read_lines(p, o)[2] == "caf\xC3\xA9");
}

TEST_CASE("parallel text: unequal line counts give a clear error", "[data][parallel][errors]") {
  nltest::TempDir t("par");
  auto a = t.write("x.en", "a\nb\nc\n");
  auto b = t.write("x.de", "a\nb\n");
  try {
    read_parallel(a, b);
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    CHECK(m.find("x.en has 3 lines") != std::string::npos);
    CHECK(m.find("x.de has 2") != std::string::npos);
  }
}

TEST_CASE("remove_bpe follows fairseq's --remove-bpe", "[data][parallel]") {
  CHECK(remove_bpe("it &apos;s that pyrami@@ d .") == "it &apos;s that pyramid .");
  CHECK(remove_bpe("a@@ b@@ c") == "abc");
  CHECK(remove_bpe("end@@") == "end");  // fairseq appends a space first: "end@@ " -> "end"
}

TEST_CASE("split_whitespace splits on Unicode whitespace like Python's str.split()", "[data][utf8]") {
  CHECK(split_whitespace("a\xC2\xA0" "b\xE3\x80\x80" "c\xE2\x80\x89" "d") == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(split_whitespace("\xC3\xA0 b").front() == "\xC3\xA0");  // à (C3 A0) is not a space
}

TEST_CASE("line reader: NUL bytes and long lines", "[data][lines][errors]") {
  nltest::TempDir t("nul");
  CHECK_THROWS_WITH(read_lines(t.write("bin.dat", std::string("ok\nab\0cd\n", 9))), Catch::Contains("bin.dat:2") && Catch::Contains("NUL"));
  std::string longline(200000, 'x');
  auto lines = read_lines(t.write("long.txt", "a\n" + longline + "\nb"));
  REQUIRE(lines.size() == 3);
  CHECK(lines[1] == longline);
  CHECK(lines[2] == "b");
}
