#pragma once
// A prepared sentence-classification data set (the folder `normlab data prepare sst5|rt` writes:
// summary.json, dict.txt, <split>.input.bin, <split>.label.bin), read for the `cls` task with
// lowercased word tokens: the training-split dictionary's symbols are lowercased and merged (counts
// summed), and every stored id is mapped to its lowercased symbol's id. No pretrained vectors.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/text/dictionary.h"

namespace nlapp {

/// One split: token ids (each sentence ends with </s>) and labels in [0, num_classes), aligned by index.
struct ClsSplit {
  std::vector<std::vector<int32_t>> tokens;
  std::vector<int32_t> labels;
  int64_t size() const { return (int64_t)labels.size(); }
  /// Length of every sentence (</s> included), for token-bounded batching.
  std::vector<int64_t> lengths() const;
};

/// See the file comment.
class ClsCorpus {
 public:
  /// Reads DIR (see the file comment). Throws std::runtime_error naming the missing or malformed file
  /// and the `normlab data prepare sst5|rt` command that writes it, or saying that the folder holds a
  /// data set of another task. For a folder without summary.json that holds other files (e.g. the raw
  /// SST-5 or RT files) the suggested `data prepare --out` is a separate folder (data-bin/<name>), never
  /// DIR itself.
  static std::shared_ptr<ClsCorpus> load(const std::filesystem::path& dir);

  std::filesystem::path dir;
  std::string name;          ///< the prepared task: "sst5" or "rt"
  int num_classes = 0;
  nl::data::Dictionary dict;  ///< lowercased training vocabulary (specials first)
  int64_t cased_vocab = 0;    ///< size of the folder's own dict.txt, before lowercasing
  std::map<std::string, ClsSplit> splits;  ///< "train", "valid", "test"

  /// The split; throws std::runtime_error naming the folder and the splits it has.
  const ClsSplit& split(const std::string& split) const;
};

/// The command that prepares `dir` for data set `name` ("sst5" or "rt"), for error messages.
std::string cls_prepare_command(const std::string& name, const std::filesystem::path& dir);

}  // namespace nlapp
