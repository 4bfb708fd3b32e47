#pragma once
// Shared helpers of the libFuzzer harnesses: turning the fuzzer's bytes into a file for the readers that
// take a path (gzopen, mmap), optionally behind a valid gzip stream.
#include <zlib.h>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace nlfuzz {

/// gzip-compresses `plain` (RFC 1952 member, zlib level 1). Aborts on a zlib failure (a harness bug).
inline std::string gzip(const std::string& plain) {
  // One deflate state per process, reset per input (allocating its ~256 KiB each time dominated the run time).
  static z_stream zs = [] {
    z_stream z{};
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
    return z;
  }();
  if (deflateReset(&zs) != Z_OK) std::abort();
  std::string out(deflateBound(&zs, plain.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
  zs.avail_in = static_cast<uInt>(plain.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(zs.total_out);
  return out;
}

/// The file content a harness writes for the fuzz input (data, size): byte 0 picks the encoding — odd:
/// the rest is gzip-compressed first, so mutations reach the parser behind a valid gzip stream; even: the
/// rest is written as is (which may itself be gzip data, valid or corrupt). An empty input gives "".
inline std::string file_bytes(const uint8_t* data, size_t size) {
  if (size == 0) return {};
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  return (data[0] & 1) ? gzip(rest) : rest;
}

/// One scratch file per fuzzing process (in /dev/shm when it exists, else the temp folder), rewritten
/// for every input and removed at exit. `tag` keeps the files of different harnesses apart.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& tag) {
    const std::filesystem::path dir =
        std::filesystem::is_directory("/dev/shm") ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
    path_ = dir / ("normlab-fuzz-" + tag + "-" + std::to_string(::getpid()));
  }
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  /// Replaces the file's content with `bytes` and returns its path.
  const std::filesystem::path& write(const std::string& bytes) {
    std::ofstream f(path_, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) std::abort();
    return path_;
  }
  /// The file's path.
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace nlfuzz
