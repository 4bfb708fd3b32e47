#pragma once
// The prepared-data binary: a list of int32 token-id sequences stored as one contiguous id array plus
// int64 offsets, memory-mapped for reading. Layout (all little-endian; docs/data-format.md):
//   bytes  0..7   magic "NLTOKDS1"
//   bytes  8..11  uint32 version (1)
//   bytes 12..15  uint32 bytes per id (4)
//   bytes 16..23  int64 number of sequences N
//   bytes 24..31  int64 number of tokens T
//   bytes 32..39  int64 vocabulary size V (ids are in [0, V); 0 = unspecified)
//   bytes 40..63  reserved (zero)
//   then int64 offsets[N + 1] (offsets[0] = 0, offsets[N] = T), then int32 ids[T].
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace nl::data {

/// Writes `sequences` in the format above to `path` (atomically: a temporary file renamed at the end).
/// Throws std::runtime_error on an I/O error or an id outside [0, vocab_size) when vocab_size > 0.
void write_token_dataset(const std::filesystem::path& path, const std::vector<std::vector<int32_t>>& sequences,
                         int64_t vocab_size);

/// Read-only, memory-mapped view of a file written by write_token_dataset.
class TokenDataset {
 public:
  /// Maps `path`; throws std::runtime_error naming the file if it is missing, truncated, has a wrong
  /// magic/version, or offsets that are not non-decreasing within [0, T].
  explicit TokenDataset(const std::filesystem::path& path);
  ~TokenDataset();
  TokenDataset(TokenDataset&& o) noexcept;
  TokenDataset(const TokenDataset&) = delete;
  TokenDataset& operator=(const TokenDataset&) = delete;
  TokenDataset& operator=(TokenDataset&&) = delete;

  /// Number of sequences N.
  int64_t size() const { return n_; }
  /// Total number of tokens T.
  int64_t num_tokens() const { return t_; }
  /// Vocabulary size recorded in the header.
  int64_t vocab_size() const { return v_; }
  /// Length of sequence `i` (no bounds check beyond an assert-like throw).
  int64_t length(int64_t i) const { return offsets_[i + 1] - offsets_[i]; }
  /// Ids of sequence `i`; throws std::out_of_range for i outside [0, N).
  std::span<const int32_t> operator[](int64_t i) const;
  /// Lengths of all sequences.
  std::vector<int64_t> lengths() const;
  /// The whole id array (all sequences back to back).
  std::span<const int32_t> all_ids() const { return {ids_, static_cast<std::size_t>(t_)}; }

 private:
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  int64_t n_ = 0, t_ = 0, v_ = 0;
  const int64_t* offsets_ = nullptr;
  const int32_t* ids_ = nullptr;
  std::string path_;
};

}  // namespace nl::data
