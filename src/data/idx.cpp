#include "data/idx.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace nl {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& p, const std::string& msg) {
  throw std::runtime_error("IDX file '" + p.string() + "': " + msg);
}

// Whole (decompressed) contents of a gzip or plain file.
std::vector<uint8_t> read_all(const fs::path& p) {
  if (!fs::exists(p)) fail(p, "file not found");
  if (fs::is_directory(p)) fail(p, "is a directory, expected a file");
  gzFile f = gzopen(p.c_str(), "rb");
  if (!f) fail(p, std::string("cannot open: ") + std::strerror(errno));
  gzbuffer(f, 1 << 17);
  std::vector<uint8_t> out;
  std::vector<uint8_t> chunk(1 << 20);
  while (true) {
    int n = gzread(f, chunk.data(), (unsigned)chunk.size());
    if (n < 0) {
      int code = 0;
      std::string msg = gzerror(f, &code);
      gzclose(f);
      fail(p, "corrupt gzip data (" + msg + "); re-download or re-install the file");
    }
    if (n == 0) break;
    out.insert(out.end(), chunk.begin(), chunk.begin() + n);
  }
  // A gzip stream cut short reads as a clean end of file but leaves an error behind.
  int code = 0;
  const char* msg = gzerror(f, &code);
  if (code != Z_OK && code != Z_STREAM_END) {
    std::string m = msg ? msg : "unknown zlib error";
    gzclose(f);
    fail(p, "corrupt or truncated gzip data (" + m + "); re-download or re-install the file");
  }
  gzclose(f);
  return out;
}

uint32_t be32(const uint8_t* b) { return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]; }

std::string hex(uint32_t v) {
  std::ostringstream s;
  s << "0x" << std::hex;
  s.width(8);
  s.fill('0');
  s << v;
  return s.str();
}

// Validates magic and length; returns the dims.
std::vector<int64_t> parse_header(const fs::path& p, const std::vector<uint8_t>& b, int ndim, const char* what) {
  const uint32_t want = 0x00000800u | (uint32_t)ndim;
  if (b.size() < 4)
    fail(p, "truncated: " + std::to_string(b.size()) + " bytes, too short for the 4-byte magic number");
  const uint32_t magic = be32(b.data());
  if (magic != want) {
    std::string meaning;
    if ((magic & 0xFFFFFF00u) == 0x00000800u)
      meaning = " (an unsigned-byte IDX file with " + std::to_string(magic & 0xFF) + " dims" +
                ((magic & 0xFF) == 1 ? ", i.e. a label file" : (magic & 0xFF) == 3 ? ", i.e. an image file" : "") + ")";
    else if (b[0] == 0x1f && b[1] == 0x8b)
      meaning = " (doubly gzip-compressed?)";
    else if ((magic >> 16) == 0 && (b[2] != 0x08))
      meaning = " (IDX element type 0x" + hex(b[2]).substr(8) + " is not unsigned byte 0x08)";
    else
      meaning = " (not an IDX file)";
    fail(p, "wrong magic number " + hex(magic) + meaning + ", expected " + hex(want) + " for " + what);
  }
  const uint64_t hdr = 4 + 4 * (uint64_t)ndim;
  if (b.size() < hdr)
    fail(p, "truncated: expected at least " + std::to_string(hdr) + " header bytes, got " + std::to_string(b.size()));
  std::vector<int64_t> dims;
  uint64_t total = 1;
  bool too_big = false;  // over 1 TiB: stop multiplying (a corrupt header must not overflow the product)
  for (int i = 0; i < ndim; ++i) {
    const uint32_t d = be32(b.data() + 4 + 4 * i);
    if (d == 0) fail(p, "dimension " + std::to_string(i) + " is 0");
    dims.push_back(d);
    if (!too_big) total *= d;
    if (total > (1ull << 40)) too_big = true;
  }
  std::string dimstr;
  for (size_t i = 0; i < dims.size(); ++i) dimstr += (i ? "×" : "") + std::to_string(dims[i]);
  if (too_big)
    fail(p, "corrupt header: dims " + dimstr + " declare over 1 TiB of data but the file holds " +
                std::to_string(b.size()) + " bytes; re-download or re-install the file");
  const uint64_t expected = hdr + total;
  if (b.size() < expected)
    fail(p, "truncated: expected " + std::to_string(expected) + " bytes (" + std::to_string(hdr) + "-byte header + " +
                dimstr + " bytes of data), got " + std::to_string(b.size()) + "; re-download or re-install the file");
  if (b.size() > expected)
    fail(p, std::to_string(b.size() - expected) + " unexpected trailing bytes after the " + dimstr +
                " data (expected " + std::to_string(expected) + " bytes in all)");
  return dims;
}

}  // namespace

IdxImages read_idx_images(const fs::path& path) {
  std::vector<uint8_t> b = read_all(path);
  auto dims = parse_header(path, b, 3, "images (idx3-ubyte)");
  IdxImages img;
  img.count = dims[0];
  img.rows = dims[1];
  img.cols = dims[2];
  img.pixels.assign(b.begin() + 16, b.end());
  return img;
}

std::vector<uint8_t> read_idx_labels(const fs::path& path, int num_classes) {
  std::vector<uint8_t> b = read_all(path);
  parse_header(path, b, 1, "labels (idx1-ubyte)");
  std::vector<uint8_t> labels(b.begin() + 8, b.end());
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] >= num_classes)
      fail(path, "label " + std::to_string(labels[i]) + " at index " + std::to_string(i) + " is outside 0.." +
                     std::to_string(num_classes - 1));
  return labels;
}

}  // namespace nl
