#pragma once
// SentencePiece subwords (Kudo & Richardson 2018) through Debian's libsentencepiece: training a BPE or
// unigram model from sentences, and encoding text to pieces / decoding pieces back to text. The pieces
// are then mapped to ids by a fairseq Dictionary, as fairseq does with sentencepiece-encoded text.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace sentencepiece { class SentencePieceProcessor; }

namespace nl::data {

/// Options for train_sentencepiece (names follow spm_train's flags).
struct SentencePieceOptions {
  std::string model_type = "bpe";          ///< "bpe" or "unigram"
  int vocab_size = 8000;                   ///< number of pieces incl. <unk> and byte pieces
  double character_coverage = 1.0;         ///< fraction of characters covered by the model
  bool byte_fallback = true;               ///< unknown characters become <0xNN> byte pieces (exact round trip)
  std::string normalization = "identity";  ///< "identity" keeps text as is; "nmt_nfkc" is spm's default
  int64_t input_sentence_size = 0;         ///< 0: use all sentences; else a sample of this many
  unsigned seed = 1;                       ///< seed of spm's sampling (SetRandomGeneratorSeed)
  int num_threads = 2;
  std::string source;                      ///< the text trained on (its files), named in errors; empty: "the training sentences"
};

/// Trains a model on `sentences` and writes it to `model_path` (spm's binary ModelProto, loadable by
/// spm_encode and Python sentencepiece). Throws std::runtime_error "SentencePiece could not train a
/// vocabulary of N on <opts.source>: <spm's message, without its source location>; <fix>": for
/// vocab_size < 1 (checked before spm runs), for spm's "smaller than required_chars. A vs B" (raise
/// --vocab-size to at least B), for "too high" (lower it to at most B), and for any other spm error.
/// Also throws std::runtime_error on an unsupported model type, no sentences, or a model file that
/// cannot be written.
void train_sentencepiece(const std::vector<std::string>& sentences, const std::filesystem::path& model_path,
                         const SentencePieceOptions& opts);

/// A loaded SentencePiece model.
class SentencePieceModel {
 public:
  /// Loads `model_path`; throws std::runtime_error if it is missing or not a SentencePiece model.
  explicit SentencePieceModel(const std::filesystem::path& model_path);
  ~SentencePieceModel();
  SentencePieceModel(const SentencePieceModel&) = delete;
  SentencePieceModel& operator=(const SentencePieceModel&) = delete;

  /// Pieces of `text` ("▁" marks a preceding space). Throws on an encoder error.
  std::vector<std::string> encode(const std::string& text) const;
  /// Text of `pieces` (inverse of encode up to spm's whitespace normalization).
  std::string decode(const std::vector<std::string>& pieces) const;
  /// Number of pieces in the model.
  int size() const;

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::string path_;
};

}  // namespace nl::data
