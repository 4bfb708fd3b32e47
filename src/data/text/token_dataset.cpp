#include "data/text/token_dataset.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace nl::data {

static_assert(std::endian::native == std::endian::little,
              "token_dataset: the binary format is little-endian; add byte swapping for this platform");

namespace {
constexpr char kMagic[8] = {'N', 'L', 'T', 'O', 'K', 'D', 'S', '1'};
constexpr uint32_t kVersion = 1;
constexpr std::size_t kHeader = 64;
}  // namespace

void write_token_dataset(const std::filesystem::path& path, const std::vector<std::vector<int32_t>>& sequences,
                         int64_t vocab_size) {
  std::vector<int64_t> offsets(sequences.size() + 1, 0);
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    offsets[i + 1] = offsets[i] + static_cast<int64_t>(sequences[i].size());
    if (vocab_size > 0)
      for (int32_t id : sequences[i])
        if (id < 0 || id >= vocab_size)
          throw std::runtime_error(path.string() + ": sequence " + std::to_string(i) + " has id " +
                                   std::to_string(id) + " outside [0, " + std::to_string(vocab_size) + ")");
  }
  char header[kHeader] = {};
  std::memcpy(header, kMagic, 8);
  uint32_t bytes_per_id = 4;
  int64_t n = static_cast<int64_t>(sequences.size()), t = offsets.back();
  std::memcpy(header + 8, &kVersion, 4);
  std::memcpy(header + 12, &bytes_per_id, 4);
  std::memcpy(header + 16, &n, 8);
  std::memcpy(header + 24, &t, 8);
  std::memcpy(header + 32, &vocab_size, 8);
  auto tmp = path;
  tmp += ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(tmp.string() + ": cannot open for writing; check that --out exists and is writable");
    f.write(header, kHeader);
    f.write(reinterpret_cast<const char*>(offsets.data()), static_cast<std::streamsize>(offsets.size() * 8));
    for (const auto& s : sequences)
      f.write(reinterpret_cast<const char*>(s.data()), static_cast<std::streamsize>(s.size() * 4));
    if (!f) throw std::runtime_error(tmp.string() + ": write failed (disk full?)");
  }
  std::filesystem::rename(tmp, path);
}

TokenDataset::TokenDataset(const std::filesystem::path& path) : path_(path.string()) {
  int fd = ::open(path_.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error(path_ + ": cannot open token dataset; run `normlab data prepare` first");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < kHeader) {
    ::close(fd);
    throw std::runtime_error(path_ + ": too small to be a token dataset (truncated?); prepare it again");
  }
  map_size_ = static_cast<std::size_t>(st.st_size);
  map_ = ::mmap(nullptr, map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw std::runtime_error(path_ + ": mmap failed");
  }
  const char* p = static_cast<const char*>(map_);
  auto fail = [&](const std::string& why) {
    ::munmap(map_, map_size_);
    map_ = nullptr;
    throw std::runtime_error(path_ + ": " + why + "; prepare the data again with `normlab data prepare`");
  };
  if (std::memcmp(p, kMagic, 8) != 0) fail("not a normlab token dataset (bad magic)");
  uint32_t version, bpi;
  std::memcpy(&version, p + 8, 4);
  std::memcpy(&bpi, p + 12, 4);
  if (version != kVersion || bpi != 4) fail("unsupported version " + std::to_string(version));
  std::memcpy(&n_, p + 16, 8);
  std::memcpy(&t_, p + 24, 8);
  std::memcpy(&v_, p + 32, 8);
  if (n_ < 0 || t_ < 0) fail("negative counts in header");
  // Bound both counts by the file size before any arithmetic on them (a corrupt header must not overflow).
  const std::size_t body = map_size_ - kHeader;
  if (static_cast<uint64_t>(n_) >= body / 8 || static_cast<uint64_t>(t_) > body / 4)
    fail("header counts N = " + std::to_string(n_) + ", T = " + std::to_string(t_) + " do not fit in the file's " +
         std::to_string(map_size_) + " bytes (truncated or corrupt)");
  const std::size_t need = kHeader + static_cast<std::size_t>(n_ + 1) * 8 + static_cast<std::size_t>(t_) * 4;
  if (map_size_ != need)
    fail("size " + std::to_string(map_size_) + " bytes, header implies " + std::to_string(need) + " (truncated?)");
  offsets_ = reinterpret_cast<const int64_t*>(p + kHeader);
  ids_ = reinterpret_cast<const int32_t*>(p + kHeader + static_cast<std::size_t>(n_ + 1) * 8);
  if (offsets_[0] != 0 || offsets_[n_] != t_) fail("offsets do not span the id array");
  for (int64_t i = 0; i < n_; ++i)
    if (offsets_[i + 1] < offsets_[i]) fail("offsets decrease at sequence " + std::to_string(i));
}

TokenDataset::TokenDataset(TokenDataset&& o) noexcept
    : map_(o.map_), map_size_(o.map_size_), n_(o.n_), t_(o.t_), v_(o.v_), offsets_(o.offsets_), ids_(o.ids_),
      path_(std::move(o.path_)) {
  o.map_ = nullptr;
}

TokenDataset::~TokenDataset() {
  if (map_) ::munmap(map_, map_size_);
}

std::span<const int32_t> TokenDataset::operator[](int64_t i) const {
  if (i < 0 || i >= n_)
    throw std::out_of_range(path_ + ": sequence " + std::to_string(i) + " outside [0, " + std::to_string(n_) + ")");
  return {ids_ + offsets_[i], static_cast<std::size_t>(offsets_[i + 1] - offsets_[i])};
}

std::vector<int64_t> TokenDataset::lengths() const {
  std::vector<int64_t> out(static_cast<std::size_t>(n_));
  for (int64_t i = 0; i < n_; ++i) out[static_cast<std::size_t>(i)] = length(i);
  return out;
}

}  // namespace nl::data
