#include "report/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

namespace nlapp {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& p, int err) {
  throw std::runtime_error(what + " '" + p.string() + "': " + std::strerror(err));
}

}  // namespace

std::filesystem::path atomic_temp_path(const std::filesystem::path& path) {
  return std::filesystem::path(path.string() + ".tmp." + std::to_string(::getpid()));
}

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  if (path.empty()) throw std::runtime_error("write_file_atomic: empty path");
  const auto parent = path.parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) fail("cannot create directory", parent, ec.value());
  }
  const auto tmp = atomic_temp_path(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create temp file for", path, errno);
  auto abort_with = [&](const std::string& what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(what, path, err);
  };
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      abort_with("cannot write", errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) abort_with("cannot fsync", errno);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("cannot close", path, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("cannot rename temp file onto", path, err);
  }
  // Make the rename itself durable; failure here is not fatal to the content.
  const auto dir = parent.empty() ? std::filesystem::path(".") : parent;
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace nlapp
