#pragma once
// Labelled sentences for text classification: SST-5 (Socher et al. 2013) in the "label ||| sentence"
// format and in the PTB-style labelled tree format, and RT / MR polarity (Pang & Lee 2005) from its two
// files with a fixed, seeded train/valid/test split.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "data/text/line_reader.h"

namespace nl::data {

/// Sentences with integer labels, aligned by index.
struct LabelledSentences {
  std::vector<std::string> sentences;  ///< whitespace-tokenized text
  std::vector<int32_t> labels;
  std::size_t size() const { return sentences.size(); }
};

/// Reads "LABEL ||| sentence" lines (SST-5 *.sentences.txt); the sentence is kept as written, minus the
/// spaces around it. Labels must be integers in
/// [0, num_classes); throws std::runtime_error naming file and line otherwise or if "|||" is missing.
LabelledSentences read_label_sentence_file(const std::filesystem::path& path, int num_classes = 5);

/// A parsed SST tree: root label and leaves (tokens, in order).
struct SstTree {
  int32_t label = -1;
  std::vector<std::string> leaves;
};

/// Parses one PTB-style labelled tree "(3 (2 The) (2 Rock))". Throws std::invalid_argument describing
/// the problem (unbalanced parentheses, missing label) — callers add file and line.
SstTree parse_sst_tree(std::string_view line);

/// Reads a file of SST trees (one per line): root label and leaves joined by single spaces. Throws
/// std::runtime_error naming file and line on a malformed tree or a label outside [0, num_classes).
LabelledSentences read_sst_tree_file(const std::filesystem::path& path, int num_classes = 5);

/// Reads RT polarity: all lines of `pos_path` (label 1) then all lines of `neg_path` (label 0); example id
/// i is the position in that concatenation. `latin1`: decode the bytes as ISO-8859-1 (Kim 2014's copy)
/// and replace U+0085 (byte 0x85, NEL) by a space as NLTK's UTF-8 copy does.
LabelledSentences read_rt_polarity(const std::filesystem::path& pos_path, const std::filesystem::path& neg_path,
                                   bool latin1);

/// Example ids of a train/valid/test split; `unused` are ids in none of them.
struct SplitIds {
  std::vector<int64_t> train, valid, test, unused;
};

/// Random split of `n` examples: seeded_permutation(n, seed) (mt19937_64 + Fisher-Yates, shuffle.h), the
/// first n_train ids are train, the next n_valid valid, the next n_test test, the rest unused; each part
/// sorted ascending. Throws std::invalid_argument on a negative size, or if n_train + n_valid + n_test > n
/// (giving both numbers; callers that know the files check first and name them).
SplitIds random_split(int64_t n, int64_t n_train, int64_t n_valid, int64_t n_test, uint64_t seed);

}  // namespace nl::data
