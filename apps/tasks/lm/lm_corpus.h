#pragma once
// The language-modelling corpora of the `lm` task, read straight from the raw files (no prepare step):
//   ptb             word level: DIR/ptb.{train.txt.gz,valid.txt,test.txt} (Mikolov's PTB), one </s>
//                   per line, vocabulary = the training words (10,000 with <eos> = </s>) plus specials;
//   tinyshakespeare character (byte) level: DIR/input.txt split contiguously 90/5/5 % (the split of
//                   `normlab data prepare tinyshakespeare`; the text is ASCII, so bytes = characters);
//   enwik8          byte level, the standard split of Transformer-XL's prep_enwik8.py: the last 10M bytes
//                   are valid (first 5M) and test (last 5M), the rest (90M of the 100M file) is train.
// Character vocabularies: <unk> = 0, then every byte value that occurs in train, ascending.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nlapp {

/// A loaded corpus: one id stream per split.
struct LmCorpus {
  std::string dataset;          ///< "ptb" | "tinyshakespeare" | "enwik8"
  std::filesystem::path source;  ///< the folder or file read
  bool word_level = false;
  int64_t vocab = 0;             ///< ids are in [0, vocab)
  int64_t n_unk = 0;             ///< valid + test tokens mapped to <unk> (absent from the train vocabulary)
  std::vector<int32_t> train, valid, test;
  /// The stream of "train" | "valid" | "test"; throws std::invalid_argument on another name.
  const std::vector<int32_t>& split(const std::string& name) const;
};

/// Names load_lm_corpus accepts.
const std::vector<std::string>& lm_dataset_names();

/// Loads `dataset` from `path` (a folder; for enwik8 the file itself or a folder holding `enwik8`).
/// Throws std::runtime_error naming the missing file and where to get it, or std::invalid_argument on
/// an unknown dataset, a tinyshakespeare input.txt that is empty or too small for its 90/5/5 split
/// (naming the file, its size and the size needed), or an enwik8 file too small for the 5M/5M
/// valid/test split.
LmCorpus load_lm_corpus(const std::string& dataset, const std::filesystem::path& path);

/// Byte-level corpus from the bytes of one text and the split points [0, a), [a, b), [b, n): the
/// vocabulary comes from the train part (see the file comment). Exposed for tests. Throws
/// std::invalid_argument unless 0 < a <= b <= bytes.size().
LmCorpus byte_corpus(const std::string& bytes, int64_t a, int64_t b);

}  // namespace nlapp
