#include "engine/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace nlapp {
namespace fs = std::filesystem;

void create_out_folder(const fs::path& out) {
  std::error_code ec;
  // A regular file at OUT or at one of its parents: say so rather than "cannot create directories".
  for (fs::path p = out; !p.empty(); p = p.parent_path()) {
    const auto st = fs::status(p, ec);
    if (fs::exists(st) && !fs::is_directory(st))
      throw std::runtime_error("--out " + out.string() + (p == out ? std::string() : ": " + p.string()) +
                               " is a file, not a folder; choose another --out");
    if (fs::exists(st) || p == p.parent_path()) break;  // the first existing folder: the rest exist too
  }
  fs::create_directories(out, ec);
  if (ec) throw std::runtime_error("cannot create --out " + out.string() + ": " + ec.message() + "; choose another --out");
}

RunFolderLock::RunFolderLock(const fs::path& out) {
  create_out_folder(out);
  const fs::path p = out / ".normlab.lock";
  fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot create " + p.string() + ": " + std::strerror(errno) + "; choose another --out");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {0};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw std::runtime_error("cannot lock " + p.string() + ": " + std::strerror(err));
    std::string pid(buf, n > 0 ? (size_t)n : 0);
    pid.erase(std::remove_if(pid.begin(), pid.end(), [](char c) { return c < '0' || c > '9'; }), pid.end());
    throw std::runtime_error("--out " + out.string() + " is in use by another normlab run (pid " +
                             (pid.empty() ? std::string("unknown") : pid) +
                             "); wait for it to finish or choose another --out");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != (ssize_t)pid.size()) {
    // The lock holds without the pid; a second run then reports "pid unknown".
  }
}

RunFolderLock::~RunFolderLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

std::vector<std::string> run_records(const fs::path& out) {
  std::vector<std::string> found;
  std::error_code ec;
  if (!fs::is_directory(out, ec)) return found;
  for (const auto& e : fs::directory_iterator(out, ec)) {
    const std::string f = e.path().filename().string();
    const bool ckpt = f.rfind("checkpoint", 0) == 0 && f.size() > 12 && f.ends_with(".safetensors");
    if (f == "results.json" || f == "metrics.jsonl" || ckpt) found.push_back(f);
  }
  // results.json and metrics.jsonl first (they say whose run it is), then the checkpoints by name.
  std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
    const bool ca = a.rfind("checkpoint", 0) == 0, cb = b.rfind("checkpoint", 0) == 0;
    return ca != cb ? cb : ca ? a < b : a > b;
  });
  return found;
}

void claim_run_folder(const fs::path& out, bool overwrite) {
  const auto found = run_records(out);
  if (found.empty()) return;
  if (!overwrite) {
    std::string list;
    for (size_t i = 0; i < found.size() && i < 4; ++i) list += (i ? ", " : "") + found[i];
    if (found.size() > 4) list += ", ... (" + std::to_string(found.size()) + " files)";
    throw std::runtime_error("--out " + out.string() + " already holds a run (" + list +
                             "); add --resume to continue it, --overwrite to replace it, or choose another --out");
  }
  for (const auto& f : found) fs::remove(out / f);
  fs::remove(out / "config.json");
}

int remove_stale_checkpoint_temps(const fs::path& out) {
  int n = 0;
  std::error_code ec;
  if (!fs::is_directory(out, ec)) return 0;
  std::vector<fs::path> stale;
  for (const auto& e : fs::directory_iterator(out, ec)) {
    const std::string f = e.path().filename().string();
    if (f.rfind(".checkpoint", 0) == 0 && f.find(".safetensors.tmp.") != std::string::npos) stale.push_back(e.path());
  }
  for (const auto& p : stale) n += fs::remove(p, ec) ? 1 : 0;
  return n;
}

int64_t checkpoint_number(const std::string& f, bool epoch_files) {
  const std::string pre = "checkpoint", ext = ".safetensors";
  if (f.size() <= pre.size() + ext.size() || f.rfind(pre, 0) != 0 || f.compare(f.size() - ext.size(), ext.size(), ext) != 0)
    return -1;
  std::string mid = f.substr(pre.size(), f.size() - pre.size() - ext.size());
  if (!epoch_files) {
    if (mid.empty() || mid[0] != '_') return -1;
    auto us = mid.rfind('_');
    if (us == 0) return -1;
    mid = mid.substr(us + 1);
  }
  if (mid.empty() || mid.size() > 18 || mid.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(mid);
}

void prune_checkpoints(const std::filesystem::path& dir, int64_t keep, bool epoch_files) {
  if (keep <= 0) return;
  std::vector<std::pair<int64_t, std::filesystem::path>> found;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const int64_t n = checkpoint_number(e.path().filename().string(), epoch_files);
    if (n >= 0) found.push_back({n, e.path()});
  }
  std::sort(found.rbegin(), found.rend());
  for (size_t i = (size_t)keep; i < found.size(); ++i) std::filesystem::remove(found[i].second);
}

}  // namespace nlapp
