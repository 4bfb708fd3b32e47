#include "data/text/line_reader.h"

#include <stdexcept>

#include "data/gzip_reader.h"
#include "data/text/utf8.h"

namespace nl::data {

void require_file(const std::filesystem::path& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw std::runtime_error(path.string() + ": " + what + " not found; check the path");
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error(path.string() + ": " + what + " is not a regular file; pass the file itself");
}

LineReader::LineReader(const std::filesystem::path& path, ReadOptions opts) : path_(path.string()), opts_(opts) {
  require_file(path);
  gz_ = std::make_unique<GzipReader>(path, path_ + ": ");
}

LineReader::~LineReader() = default;

bool LineReader::next(std::string& line) {
  std::size_t nl;
  // Buffered gzread (not gzgets) so that a NUL byte cannot silently cut a line short.
  while ((nl = buf_.find('\n', pos_)) == std::string::npos && !eof_) {
    buf_.erase(0, pos_);
    pos_ = 0;
    uint8_t chunk[1 << 16];
    const std::size_t n = gz_->read(chunk, sizeof chunk);  // throws on a truncated or corrupt stream
    if (n == 0) eof_ = true;
    else buf_.append(reinterpret_cast<const char*>(chunk), n);
  }
  if (nl == std::string::npos) {
    if (pos_ >= buf_.size()) return false;  // end of file (a final line without '\n' was returned before)
    nl = buf_.size();
  }
  line.assign(buf_, pos_, nl - pos_);
  pos_ = nl + 1;
  ++line_no_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line_no_ == 1) had_bom_ = strip_utf8_bom(line);
  if (line.find('\0') != std::string::npos)
    throw std::runtime_error(path_ + ":" + std::to_string(line_no_) +
                             ": contains a NUL byte; this is not a text file (pass the text file)");
  if (opts_.encoding == Encoding::Latin1)
    line = latin1_to_utf8(line);
  else if (opts_.validate_utf8)
    check_utf8(line, path_, line_no_);
  return true;
}

std::vector<std::string> read_lines(const std::filesystem::path& path, ReadOptions opts) {
  LineReader r(path, opts);
  std::vector<std::string> out;
  std::string line;
  while (r.next(line)) out.push_back(line);
  return out;
}

std::string read_text(const std::filesystem::path& path, ReadOptions opts) {
  require_file(path);
  GzipReader gz(path, path.string() + ": ");
  std::string out;
  uint8_t buf[1 << 16];
  while (const std::size_t n = gz.read(buf, sizeof buf)) out.append(reinterpret_cast<const char*>(buf), n);
  strip_utf8_bom(out);
  if (opts.encoding == Encoding::Latin1) return latin1_to_utf8(out);
  if (opts.validate_utf8) {
    if (auto pos = find_invalid_utf8(out); pos != std::string::npos) {
      std::size_t line = 1;
      std::size_t start = 0;
      for (std::size_t i = 0; i < pos; ++i)
        if (out[i] == '\n') { ++line; start = i + 1; }
      check_utf8(std::string_view(out).substr(start, out.find('\n', pos) - start), path.string(), line);
    }
  }
  return out;
}

}  // namespace nl::data
