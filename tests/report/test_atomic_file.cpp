// Tests for apps/common/atomic_file: content replaced, no temp file left, clear errors.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/atomic_file.h"

using namespace nlapp;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
fs::path fresh_dir(const std::string& tag) {
  auto d = fs::temp_directory_path() / ("nl_atomic_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}
}  // namespace

TEST_CASE("atomic write: creates parents, replaces content, leaves no temp file", "[report][atomic]") {
  auto dir = fresh_dir("basic");
  auto path = dir / "a" / "b" / "results.json";
  write_file_atomic(path, "first version, longer than the second");
  CHECK(slurp(path) == "first version, longer than the second");
  write_file_atomic(path, "second");
  CHECK(slurp(path) == "second");
  CHECK_FALSE(fs::exists(atomic_temp_path(path)));
  CHECK(atomic_temp_path(path).string() == path.string() + ".tmp." + std::to_string(::getpid()));
  // only the one file in the folder
  std::size_t n = 0;
  for (auto& e : fs::directory_iterator(path.parent_path())) { (void)e; ++n; }
  CHECK(n == 1);
  // binary content with NUL bytes survives
  std::string bin("a\0b\0c", 5);
  write_file_atomic(path, bin);
  CHECK(slurp(path) == bin);
  write_file_atomic(path, "");
  CHECK(fs::file_size(path) == 0);
  fs::remove_all(dir);
}

TEST_CASE("atomic write: failure names the path and the reason", "[report][atomic]") {
  auto dir = fresh_dir("fail");
  fs::create_directories(dir);
  // parent "directory" is a regular file -> cannot create directories below it
  std::ofstream(dir / "file") << "x";
  auto bad = dir / "file" / "sub" / "out.txt";
  try {
    write_file_atomic(bad, "data");
    FAIL("expected an exception");
  } catch (const std::runtime_error& e) {
    std::string msg = e.what();
    CHECK(msg.find((dir / "file").string()) != std::string::npos);
    CHECK(msg.find("Not a directory") != std::string::npos);
  }
  // target is an existing directory -> rename fails, temp file cleaned up
  fs::create_directories(dir / "isdir");
  try {
    write_file_atomic(dir / "isdir", "data");
    FAIL("expected an exception");
  } catch (const std::runtime_error& e) {
    std::string msg = e.what();
    CHECK(msg.find("isdir") != std::string::npos);
    CHECK(msg.find("Is a directory") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(atomic_temp_path(dir / "isdir")));
  CHECK_THROWS_AS(write_file_atomic("", "x"), std::runtime_error);
  fs::remove_all(dir);
}
