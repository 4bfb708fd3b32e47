#include "data/idx.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "data/gzip_reader.h"

namespace nl {

namespace fs = std::filesystem;

namespace {

// No IDX data set comes near this; a header announcing more is corrupt (and must not be multiplied out).
constexpr uint64_t kMaxDataBytes = 1ull << 40;  // 1 TiB
// Bytes after the announced data that are counted for the error message before reading stops.
constexpr uint64_t kMaxTrailingCount = 1ull << 20;

[[noreturn]] void fail(const fs::path& p, const std::string& msg) {
  throw std::runtime_error("IDX file '" + p.string() + "': " + msg);
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

// The dims and data of an unsigned-byte IDX file with `ndim` dims. Reads the magic and the dims first
// and validates them (overflow-safe product, at most kMaxDataBytes) before reading the data; reads
// exactly the announced number of bytes, so a gzip bomb cannot make it allocate more.
struct IdxData {
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

IdxData read_idx(const fs::path& p, int ndim, const char* what) {
  GzipReader in(p, "IDX file '" + p.string() + "': ");
  const uint32_t want = 0x00000800u | (uint32_t)ndim;
  uint8_t m[4];
  const size_t got_magic = in.read(m, 4);
  if (got_magic < 4)
    fail(p, "truncated: " + std::to_string(got_magic) + " bytes, too short for the 4-byte magic number");
  const uint32_t magic = be32(m);
  if (magic != want) {
    std::string meaning;
    if ((magic & 0xFFFFFF00u) == 0x00000800u)
      meaning = " (an unsigned-byte IDX file with " + std::to_string(magic & 0xFF) + " dims" +
                ((magic & 0xFF) == 1 ? ", i.e. a label file" : (magic & 0xFF) == 3 ? ", i.e. an image file" : "") + ")";
    else if (m[0] == 0x1f && m[1] == 0x8b)
      meaning = " (doubly gzip-compressed?)";
    else if ((magic >> 16) == 0 && (m[2] != 0x08))
      meaning = " (IDX element type 0x" + hex(m[2]).substr(8) + " is not unsigned byte 0x08)";
    else
      meaning = " (not an IDX file)";
    fail(p, "wrong magic number " + hex(magic) + meaning + ", expected " + hex(want) + " for " + what);
  }
  const uint64_t hdr = 4 + 4 * (uint64_t)ndim;
  std::vector<uint8_t> d(4 * (size_t)ndim);
  const size_t got_dims = in.read(d.data(), d.size());
  if (got_dims < d.size())
    fail(p, "truncated: expected at least " + std::to_string(hdr) + " header bytes, got " + std::to_string(4 + got_dims));
  IdxData out;
  uint64_t total = 1;
  bool too_big = false;  // the product is only formed while it stays <= kMaxDataBytes (no overflow)
  for (int i = 0; i < ndim; ++i) {
    const uint32_t di = be32(d.data() + 4 * i);
    if (di == 0) fail(p, "dimension " + std::to_string(i) + " is 0");
    out.dims.push_back(di);
    if (!too_big && total > kMaxDataBytes / di) too_big = true;
    if (!too_big) total *= di;
  }
  std::string dimstr;
  for (size_t i = 0; i < out.dims.size(); ++i) dimstr += (i ? "×" : "") + std::to_string(out.dims[i]);
  if (too_big)
    fail(p, "corrupt header: dims " + dimstr + " declare over 1 TiB of data; re-download or re-install the file");

  // The data, in chunks: memory grows only as real bytes arrive (a header announcing much more than the
  // file holds fails as truncated without allocating the announced size).
  const uint64_t expected = hdr + total;
  constexpr size_t kChunk = 1 << 16;  // small: a lying header costs little
  out.bytes.reserve((size_t)std::min<uint64_t>(total, kChunk));
  while (out.bytes.size() < total) {
    const size_t old = out.bytes.size();
    const size_t n = (size_t)std::min<uint64_t>(total - old, kChunk);
    out.bytes.resize(old + n);
    const size_t got = in.read(out.bytes.data() + old, n);
    if (got < n)
      fail(p, "truncated: expected " + std::to_string(expected) + " bytes (" + std::to_string(hdr) + "-byte header + " +
                  dimstr + " bytes of data), got " + std::to_string(hdr + old + got) +
                  "; re-download or re-install the file");
  }
  // Anything after the data is an error; count at most kMaxTrailingCount of it.
  uint64_t trailing = 0;
  uint8_t scratch[1 << 16];
  while (trailing <= kMaxTrailingCount) {
    const size_t got = in.read(scratch, sizeof scratch);
    if (got == 0) break;
    trailing += got;
  }
  if (trailing > kMaxTrailingCount)
    fail(p, "over " + std::to_string(kMaxTrailingCount) + " unexpected trailing bytes after the " + dimstr +
                " data (expected " + std::to_string(expected) + " bytes in all)");
  if (trailing > 0)
    fail(p, std::to_string(trailing) + " unexpected trailing bytes after the " + dimstr + " data (expected " +
                std::to_string(expected) + " bytes in all)");
  return out;
}

}  // namespace

IdxImages read_idx_images(const fs::path& path) {
  IdxData d = read_idx(path, 3, "images (idx3-ubyte)");
  IdxImages img;
  img.count = d.dims[0];
  img.rows = d.dims[1];
  img.cols = d.dims[2];
  img.pixels = std::move(d.bytes);
  return img;
}

std::vector<uint8_t> read_idx_labels(const fs::path& path, int num_classes) {
  std::vector<uint8_t> labels = read_idx(path, 1, "labels (idx1-ubyte)").bytes;
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] >= num_classes)
      fail(path, "label " + std::to_string(labels[i]) + " at index " + std::to_string(i) + " is outside 0.." +
                     std::to_string(num_classes - 1));
  return labels;
}

}  // namespace nl
