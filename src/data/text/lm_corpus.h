#pragma once
// Language-modelling corpora: word level (one sentence per line, an end-of-sentence token appended per
// line as in Mikolov's PTB setup and fairseq's </s>) and character level (the text as a stream of
// code points, newlines included), plus the fixed contiguous split used for corpora without one.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/text/dictionary.h"

namespace nl::data {

/// Tokens of each line of a word-level corpus (whitespace split; empty lines give empty vectors).
std::vector<std::vector<std::string>> read_word_corpus(const std::filesystem::path& path);

/// One contiguous id stream: each line's ids followed by </s> (Dictionary::kEos). `n_unk` (optional)
/// receives the number of tokens mapped to <unk>.
std::vector<int32_t> word_stream(const std::vector<std::vector<std::string>>& lines, const Dictionary& dict,
                                 int64_t* n_unk = nullptr);

/// The code points of a UTF-8 text file (BOM removed), in order, newlines included. Throws on invalid UTF-8.
std::vector<std::string> read_char_corpus(const std::filesystem::path& path);

/// How a character is written in dict.txt: itself when printable and not whitespace, else "<0xNN>"
/// (its byte, sentencepiece style), because dict.txt lines are "symbol count".
std::string char_symbol(const std::string& code_point);

/// Contiguous split [0, a), [a, b), [b, n) with a = floor(n * train_frac), b = floor(n * (train_frac +
/// valid_frac)) (integer arithmetic on per-mille fractions so it is exact and platform independent).
struct ContiguousSplit {
  int64_t train_end = 0, valid_end = 0, total = 0;
};
/// `what` names the corpus in messages (its file) and `unit` what n counts ("characters", "bytes").
/// Throws std::invalid_argument unless 0 < train_permille and train_permille + valid_permille <= 1000,
/// and when n is too small for every part (train, and valid and test where their fraction is not 0)
/// to get at least 2 units: the message names `what`, says it is empty or gives its size, and the
/// smallest size that splits.
ContiguousSplit contiguous_split(int64_t n, int64_t train_permille = 900, int64_t valid_permille = 50,
                                 const std::string& what = "the corpus", const std::string& unit = "characters");

}  // namespace nl::data
