#include "report/metrics_log.h"

#include "report/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace nlapp {

MetricsLog::MetricsLog(const std::filesystem::path& path, bool append) : path_(path) {
  const auto parent = path.parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
      throw std::runtime_error("cannot create directory '" + parent.string() + "': " +
                               ec.message());
  }
  f_ = std::fopen(path.c_str(), append ? "ab" : "wb");
  if (!f_)
    throw std::runtime_error("cannot open metrics log '" + path.string() + "': " +
                             std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (f_) std::fclose(f_);
}

MetricsLog::MetricsLog(MetricsLog&& other) noexcept
    : path_(std::move(other.path_)), f_(std::exchange(other.f_, nullptr)) {}

MetricsLog& MetricsLog::operator=(MetricsLog&& other) noexcept {
  if (this != &other) {
    if (f_) std::fclose(f_);
    path_ = std::move(other.path_);
    f_ = std::exchange(other.f_, nullptr);
  }
  return *this;
}

void MetricsLog::write(const nlohmann::json& record) {
  if (!record.is_object()) throw std::invalid_argument("MetricsLog::write: record is not a JSON object");
  if (!f_) throw std::runtime_error("metrics log '" + path_.string() + "' is closed");
  // dump() writes NaN/inf as null; replace invalid UTF-8 rather than throwing mid-run.
  std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0)
    throw std::runtime_error("cannot write metrics log '" + path_.string() + "': " +
                             std::strerror(errno));
}

void MetricsLog::close() {
  if (f_) {
    std::FILE* f = std::exchange(f_, nullptr);
    if (std::fclose(f) != 0)
      throw std::runtime_error("cannot close metrics log '" + path_.string() + "': " +
                               std::strerror(errno));
  }
}

std::vector<nlohmann::json> read_metrics_log(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open metrics log '" + path.string() + "'");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<nlohmann::json> out;
  std::size_t pos = 0, lineno = 0;
  while (pos < content.size()) {
    std::size_t nl = content.find('\n', pos);
    const bool last_unterminated = (nl == std::string::npos);
    std::string line = content.substr(pos, last_unterminated ? std::string::npos : nl - pos);
    pos = last_unterminated ? content.size() : nl + 1;
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      if (last_unterminated) break;  // torn final line from a killed run
      throw std::runtime_error("metrics log '" + path.string() + "': line " +
                               std::to_string(lineno) + " is not a JSON object");
    }
    out.push_back(std::move(j));
  }
  return out;
}

TruncatedLog truncate_lines(const std::filesystem::path& p, int64_t lines) {
  TruncatedLog r;
  std::ifstream in(p, std::ios::binary);
  if (!in) return r;
  std::string keep, line;
  for (int64_t i = 0; i < lines && std::getline(in, line); ++i) {
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      r.damaged.push_back(i + 1);
      continue;
    }
    keep += line + "\n";
    ++r.kept;
  }
  in.close();
  write_file_atomic(p, keep);
  return r;
}

}  // namespace nlapp
