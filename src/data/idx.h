#pragma once
// Reader for the IDX format of MNIST-style data sets (LeCun et al. 1998; http://yann.lecun.com/exdb/mnist/):
//   magic (4 bytes, big-endian): 0x00 0x00 <type: 0x08 = unsigned byte> <number of dims>
//   dims (one big-endian u32 each), then the data, row-major.
// Only unsigned-byte idx1 (labels, magic 0x00000801) and idx3 (images, magic 0x00000803) are read.
// Files may be gzip-compressed or plain (zlib's gzopen reads both transparently).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nl {

/// Images of an idx3 file: `count` images of rows × cols unsigned bytes, row-major, image after image.
struct IdxImages {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  ///< count * rows * cols values in 0..255
};

/// Reads an idx3-ubyte file (.gz or plain). Streams the file: the magic number (0x00000803) and the dims
/// are read and validated first (no dim 0; the product is formed overflow-safely and may not exceed
/// 1 TiB), then exactly count·rows·cols data bytes are read in chunks, so memory grows only with bytes
/// actually present and never beyond what the header announces (a gzip bomb cannot inflate further; at
/// most 1 MiB of trailing bytes is counted). Throws std::runtime_error starting with "IDX file '<path>': "
/// that names the problem: missing file, bad gzip data, wrong magic (with the value found and what it
/// would mean, e.g. a label file), "corrupt header" (over 1 TiB announced), "truncated: expected N
/// bytes …, got M", or trailing bytes.
IdxImages read_idx_images(const std::filesystem::path& path);

/// Reads an idx1-ubyte label file (.gz or plain; magic 0x00000801) and checks every label is in
/// [0, num_classes). Same errors as read_idx_images, plus "label L at index i is outside 0..num_classes-1".
std::vector<uint8_t> read_idx_labels(const std::filesystem::path& path, int num_classes = 10);

}  // namespace nl
