#include "data/gzip_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nl {

GzipReader::GzipReader(const std::filesystem::path& p, std::string prefix) : prefix_(std::move(prefix)) {
  if (!std::filesystem::exists(p)) fail("file not found");
  if (std::filesystem::is_directory(p)) fail("is a directory, expected a file");
  f_ = gzopen(p.c_str(), "rb");
  if (!f_) fail(std::string("cannot open: ") + std::strerror(errno));
}

GzipReader::~GzipReader() {
  if (f_) gzclose(f_);
}

void GzipReader::fail(const std::string& msg) const { throw std::runtime_error(prefix_ + msg); }

size_t GzipReader::read(uint8_t* dst, size_t n) {
  size_t got = 0;
  while (got < n) {
    const unsigned want = (unsigned)std::min<size_t>(n - got, 1u << 30);
    const int r = gzread(f_, dst + got, want);
    if (r < 0) {
      int code = 0;
      fail(std::string("corrupt gzip data (") + gzerror(f_, &code) + "); re-download or re-install the file");
    }
    if (r == 0) {
      // A gzip stream cut short reads as a clean end of file but leaves an error behind.
      int code = 0;
      const char* msg = gzerror(f_, &code);
      if (code != Z_OK && code != Z_STREAM_END)
        fail("corrupt or truncated gzip data (" + std::string(msg ? msg : "unknown zlib error") +
             "); re-download or re-install the file");
      break;
    }
    got += (size_t)r;
  }
  return got;
}

}  // namespace nl
