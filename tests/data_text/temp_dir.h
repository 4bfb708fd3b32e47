#pragma once
// A fresh temporary folder per test, removed at scope exit.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace nltest {
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) {
    path = std::filesystem::temp_directory_path() / ("normlab_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  /// Writes `bytes` to path/name and returns the full path.
  std::filesystem::path write(const std::string& name, const std::string& bytes) const {
    auto p = path / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
};
}  // namespace nltest
