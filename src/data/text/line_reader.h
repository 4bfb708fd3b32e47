#pragma once
// Line-oriented reading of plain or gzip-compressed text files (zlib's gzopen reads both), with the
// checks every reader needs: the file exists, a leading UTF-8 BOM is dropped, a missing final newline
// is accepted, CR of CRLF line ends is removed, and each line is valid UTF-8 (or decoded from Latin-1).
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace nl {
class GzipReader;
}

namespace nl::data {

/// Text encoding of an input file.
enum class Encoding { Utf8, Latin1 };

/// Options for LineReader / read_lines.
struct ReadOptions {
  Encoding encoding = Encoding::Utf8;  ///< Latin1: every byte is decoded to UTF-8
  bool validate_utf8 = true;           ///< Utf8: throw on invalid bytes (naming file and line)
};

/// Throws std::runtime_error("<file>: <what> not found; check the path") when `path` does not exist, or
/// "... is not a regular file" (callers that know which option gave the path pass it in `what`).
void require_file(const std::filesystem::path& path, const std::string& what = "input file");

/// Streams the lines of one file. A line never contains its '\n' (nor a trailing '\r').
class LineReader {
 public:
  /// Opens `path` (plain or .gz). Throws std::runtime_error if it is missing or unreadable.
  explicit LineReader(const std::filesystem::path& path, ReadOptions opts = {});
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// Reads the next line into `line`; false at end of file. Throws on invalid UTF-8 or a read error;
  /// a gzip stream that ends before its end marker (a cut download) is an error naming the file.
  bool next(std::string& line);
  /// 1-based number of the line last returned by next() (0 before the first).
  std::size_t line_number() const { return line_no_; }
  /// The path as given.
  const std::string& path() const { return path_; }
  /// Whether the file started with a UTF-8 byte-order mark (removed from line 1).
  bool had_bom() const { return had_bom_; }

 private:
  std::unique_ptr<GzipReader> gz_;
  std::string path_;
  ReadOptions opts_;
  std::size_t line_no_ = 0;
  bool had_bom_ = false;
  std::string buf_;       // decompressed bytes not yet returned
  std::size_t pos_ = 0;   // start of the next line in buf_
  bool eof_ = false;
};

/// All lines of a file (see LineReader). A final line without '\n' counts as a line; an empty file has none.
std::vector<std::string> read_lines(const std::filesystem::path& path, ReadOptions opts = {});

/// Whole (decompressed) content of a file as bytes, BOM removed; validated as UTF-8 when requested.
/// A truncated or corrupt gzip stream is a std::runtime_error naming the file.
std::string read_text(const std::filesystem::path& path, ReadOptions opts = {});

}  // namespace nl::data
