#pragma once
// Token <-> id mapping in fairseq's convention (fairseq/data/dictionary.py): the special symbols
// <s>=0, <pad>=1, </s>=2, <unk>=3 come first, then symbols by descending count; ties are broken by the
// symbol's bytes in ascending order (fairseq sorts by symbol before Counter.most_common, which is stable).
// dict.txt holds one "symbol count" line per non-special symbol, in id order, readable by fairseq.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nl::data {

class Dictionary {
 public:
  static constexpr int32_t kBos = 0;  ///< "<s>"
  static constexpr int32_t kPad = 1;  ///< "<pad>"
  static constexpr int32_t kEos = 2;  ///< "</s>"
  static constexpr int32_t kUnk = 3;  ///< "<unk>"
  static constexpr int32_t kNumSpecial = 4;

  /// A dictionary holding only the four special symbols.
  Dictionary();

  /// Adds `n` occurrences of `symbol` (inserting it if new); returns its id.
  int32_t add_symbol(const std::string& symbol, int64_t n = 1);
  /// Adds every whitespace-separated token of `line` once.
  void add_line(std::string_view line);

  /// Re-orders the non-special symbols by descending count (ties: ascending bytes), keeps those with
  /// count >= `threshold` and at most `nwords` symbols in total including specials (nwords <= 0: all),
  /// then pads the size to a multiple of `padding_factor` with "madeupwordNNNN" symbols of count 0
  /// (fairseq's padding; 1 = none). Ids of the special symbols never change.
  void finalize(int64_t threshold = -1, int64_t nwords = -1, int padding_factor = 1);

  /// Id of `symbol`, or kUnk when absent.
  int32_t index(std::string_view symbol) const;
  /// Whether `symbol` is in the dictionary.
  bool contains(std::string_view symbol) const;
  /// Symbol of `id`; throws std::out_of_range for an id outside [0, size()).
  const std::string& symbol(int32_t id) const;
  /// Count recorded for `id` (specials: 0 unless added).
  int64_t count(int32_t id) const { return counts_.at(static_cast<std::size_t>(id)); }
  /// Number of symbols including the specials.
  int32_t size() const { return static_cast<int32_t>(symbols_.size()); }

  /// Ids of `tokens` (unknown ones -> kUnk), with </s> appended when `append_eos`. If `n_unk` is not null
  /// it receives the number of tokens mapped to <unk> (a literal "<unk>" token counts too).
  std::vector<int32_t> encode(const std::vector<std::string>& tokens, bool append_eos = true,
                              int64_t* n_unk = nullptr) const;
  /// Splits `line` on whitespace and encodes it as encode() does.
  std::vector<int32_t> encode_line(std::string_view line, bool append_eos = true, int64_t* n_unk = nullptr) const;
  /// Symbols of `ids` joined by spaces, stopping at the first </s>, skipping <pad> (and <s> at the start).
  std::string decode(const std::vector<int32_t>& ids) const;

  /// Writes dict.txt ("symbol count" per line, non-specials in id order). Throws on an I/O error or a
  /// symbol containing whitespace (not representable in the format).
  void save(const std::filesystem::path& path) const;
  /// Reads a dict.txt written by save() or by fairseq; throws naming file and line on a malformed line
  /// or a duplicate symbol.
  static Dictionary load(const std::filesystem::path& path);

 private:
  std::vector<std::string> symbols_;
  std::vector<int64_t> counts_;
  std::unordered_map<std::string, int32_t> index_;
};

}  // namespace nl::data
