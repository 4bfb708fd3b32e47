// Generated blocks in markdown (report/doc_blocks.h): content is replaced by the generator's, --check
// compares without writing, text outside blocks is untouched, and malformed blocks are errors naming the
// file and line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "report/doc_blocks.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace nlapp;

namespace {
fs::path write(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("normlab-docblocks-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p;
}
std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
std::string gen(const std::string& name) {
  if (name == "t/one") return "| a |\n|---|\n| 1 |";
  throw std::invalid_argument("unknown report block '" + name + "'");
}
}  // namespace

TEST_CASE("doc blocks: rewritten from the generator, checked without writing", "[report][docs]") {
  const std::string text = "intro\n<!-- normlab report t/one -->\nold table\n<!-- end normlab report -->\nafter\n";
  const fs::path f = write("a.md", text);
  auto found = update_doc_blocks({f}, gen, /*check_only=*/true);
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "t/one");
  CHECK(found[0].changed);
  CHECK(read(f) == text);  // --check writes nothing
  update_doc_blocks({f}, gen, false);
  CHECK(read(f) == "intro\n<!-- normlab report t/one -->\n| a |\n|---|\n| 1 |\n<!-- end normlab report -->\nafter\n");
  found = update_doc_blocks({f}, gen, true);
  CHECK_FALSE(found[0].changed);
}

TEST_CASE("doc blocks: malformed blocks and unknown names are errors with file and line", "[report][docs]") {
  const fs::path open = write("b.md", "x\n<!-- normlab report t/one -->\nno end\n");
  CHECK_THROWS_WITH(update_doc_blocks({open}, gen, true), Contains("b.md:2") && Contains("no closing"));
  const fs::path unknown = write("c.md", "<!-- normlab report t/two -->\n<!-- end normlab report -->\n");
  CHECK_THROWS_WITH(update_doc_blocks({unknown}, gen, true), Contains("c.md:1") && Contains("unknown report block 't/two'"));
  const fs::path nested =
      write("d.md", "<!-- normlab report t/one -->\n<!-- normlab report t/one -->\n<!-- end normlab report -->\n");
  CHECK_THROWS_WITH(update_doc_blocks({nested}, gen, true), Contains("not closed before the next one"));
}
