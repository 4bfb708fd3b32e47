#pragma once
// JSON-lines metrics log: one JSON object per line, flushed after every line, so a long run that
// is killed keeps every result written before it died.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

namespace nlapp {

/// Appends JSON objects to a file, one per line (`{"step":100,"loss":0.42}`).
/// Non-finite floating-point values are written as null (JSON has no NaN/inf).
class MetricsLog {
 public:
  /// Opens `path` for appending (or truncates it when `append` is false), creating parent
  /// directories. Throws std::runtime_error naming the path and errno text on failure.
  explicit MetricsLog(const std::filesystem::path& path, bool append = true);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;
  MetricsLog(MetricsLog&& other) noexcept;
  MetricsLog& operator=(MetricsLog&& other) noexcept;

  /// Writes `record` as one line and flushes it to the OS. Throws std::invalid_argument if
  /// `record` is not an object, std::runtime_error if the write fails.
  void write(const nlohmann::json& record);

  /// Closes the file (also done by the destructor); further writes throw.
  void close();

  /// The file this log writes to.
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::FILE* f_ = nullptr;
};

/// Reads a JSON-lines file back: one object per non-empty line. A truncated final line (a run
/// killed mid-write) is skipped; a malformed line elsewhere throws std::runtime_error naming
/// the file and line number.
std::vector<nlohmann::json> read_metrics_log(const std::filesystem::path& path);

/// What truncate_lines kept: the lines now in the file, and the numbers (1-based, in the file before) of the
/// lines among the first `lines` that were not JSON objects (damaged), which it dropped.
struct TruncatedLog {
  int64_t kept = 0;
  std::vector<int64_t> damaged;
};

/// Keeps the first `lines` lines of the log at `path` (rewritten atomically; nothing when it does not
/// exist): a resumed run rewinds what was logged after its checkpoint, so the log continues exactly as if
/// the run had never stopped. A damaged line among them (not a JSON object: a disk error, an edit) is dropped
/// and reported, so that readers of the log (read_metrics_log, `normlab report`) do not fail on it later.
TruncatedLog truncate_lines(const std::filesystem::path& path, int64_t lines);

}  // namespace nlapp
