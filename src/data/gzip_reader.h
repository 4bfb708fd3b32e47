#pragma once
// Streaming reader of the decompressed bytes of a gzip file (or a plain file: zlib's gzopen reads both),
// shared by the binary image readers (idx.h, cifar10.h). Reading in caller-sized chunks lets a reader
// check a header before inflating data and never read more than it expects (no gzip bomb).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <zlib.h>

namespace nl {

/// Sequential reader of one file's decompressed bytes. Every error is a std::runtime_error whose
/// message starts with `prefix` (e.g. "IDX file 'x.gz': ").
class GzipReader {
 public:
  /// Opens `path`. Throws (with `prefix`) "file not found", "is a directory, expected a file" or
  /// "cannot open: <errno text>".
  GzipReader(const std::filesystem::path& path, std::string prefix);
  ~GzipReader();
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  /// Reads up to n bytes into dst; fewer only at the end of the data. Throws "corrupt gzip data (...)"
  /// or "corrupt or truncated gzip data (...)" with the fix "re-download or re-install the file".
  size_t read(uint8_t* dst, size_t n);

  /// Throws std::runtime_error(prefix + msg).
  [[noreturn]] void fail(const std::string& msg) const;

 private:
  std::string prefix_;
  gzFile f_ = nullptr;
};

}  // namespace nl
