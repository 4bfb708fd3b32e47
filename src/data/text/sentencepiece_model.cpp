#include "data/text/sentencepiece_model.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <fstream>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

// Exported by libsentencepiece but not declared in its public headers (0.1.97).
namespace sentencepiece {
void SetRandomGeneratorSeed(unsigned int seed);
namespace logging { void SetMinLogLevel(int v); }
}  // namespace sentencepiece

namespace nl::data {

namespace {
class VectorIterator : public sentencepiece::SentenceIterator {
 public:
  explicit VectorIterator(const std::vector<std::string>& v) : v_(v) {}
  bool done() const override { return i_ >= v_.size(); }
  void Next() override { ++i_; }
  const std::string& value() const override { return v_[i_]; }
  sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }

 private:
  const std::vector<std::string>& v_;
  std::size_t i_ = 0;
};

// spm's message without its "Code: ./src/file.cc(N) [condition] " prefix: what it says to a person.
std::string spm_message(const std::string& status) {
  std::string m = status;
  if (auto colon = m.find(": "); colon != std::string::npos && colon < 24) m = m.substr(colon + 2);
  if (auto loc = m.find(") ["); loc != std::string::npos && m.find(".cc(") < loc) {
    if (auto end = m.find("] ", loc); end != std::string::npos) m = m.substr(end + 2);
    else if (m.back() == ']') m.clear();  // a bare failed check: nothing said beyond the condition
  }
  while (!m.empty() && (m.back() == ' ' || m.back() == '\n')) m.pop_back();
  return m.empty() ? status : m;
}

// What to say after "could not train a vocabulary of N on X: " for spm's status `msg`.
//   "Vocabulary size is smaller than required_chars. A vs B." -> the size must be at least B;
//   "Vocabulary size too high (A). Please set it to a value <= B." -> at most B;
//   anything else -> spm's message (without its source location) and a hint at --vocab-size.
std::string vocab_explanation(const std::string& msg) {
  unsigned long a = 0, b = 0;
  if (auto at = msg.find("smaller than required_chars. "); at != std::string::npos &&
      std::sscanf(msg.c_str() + at, "smaller than required_chars. %lu vs %lu", &a, &b) == 2)
    return "this text needs at least " + std::to_string(b) +
           " pieces for its characters, byte pieces and special symbols (--vocab-size " + std::to_string(a) +
           " is too small); try a larger --vocab-size, e.g. " + std::to_string(b) + " or more";
  if (auto at = msg.find("too high ("); at != std::string::npos &&
      std::sscanf(msg.c_str() + at, "too high (%lu). Please set it to a value <= %lu", &a, &b) == 2)
    return "this text supports at most " + std::to_string(b) + " pieces (--vocab-size " + std::to_string(a) +
           " is too large); lower --vocab-size to at most " + std::to_string(b) + ", or train on more text";
  return spm_message(msg) + "; lower --vocab-size";
}
}  // namespace

void train_sentencepiece(const std::vector<std::string>& sentences, const std::filesystem::path& model_path,
                         const SentencePieceOptions& o) {
  if (o.model_type != "bpe" && o.model_type != "unigram")
    throw std::runtime_error("sentencepiece: model type \"" + o.model_type + "\" not supported; use bpe or unigram");
  if (sentences.empty()) throw std::runtime_error("sentencepiece: no training sentences");
  const std::string what = "SentencePiece could not train a vocabulary of " + std::to_string(o.vocab_size) + " on " +
                           (o.source.empty() ? std::string("the training sentences") : o.source) + ": ";
  if (o.vocab_size < 1)
    throw std::runtime_error(what + "the vocabulary size must be positive (at least one piece per character of the "
                                    "text, plus byte and special pieces); pass a larger --vocab-size (default 8000)");
  sentencepiece::logging::SetMinLogLevel(1);  // warnings and errors only
  sentencepiece::SetRandomGeneratorSeed(o.seed);
  std::unordered_map<std::string, std::string> kw{
      {"model_type", o.model_type},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"character_coverage", std::to_string(o.character_coverage)},
      {"byte_fallback", o.byte_fallback ? "true" : "false"},
      {"normalization_rule_name", o.normalization},
      {"num_threads", std::to_string(o.num_threads)},
      {"hard_vocab_limit", "false"},
      {"max_sentence_length", "100000"}};
  if (o.input_sentence_size > 0) {
    kw["input_sentence_size"] = std::to_string(o.input_sentence_size);
    kw["shuffle_input_sentence"] = "true";
  }
  VectorIterator it(sentences);
  std::string proto;
  auto st = sentencepiece::SentencePieceTrainer::Train(kw, &it, &proto);
  if (!st.ok()) throw std::runtime_error(what + vocab_explanation(st.ToString()));
  std::ofstream f(model_path, std::ios::binary);
  if (!f) throw std::runtime_error(model_path.string() + ": cannot open for writing");
  f.write(proto.data(), static_cast<std::streamsize>(proto.size()));
  if (!f) throw std::runtime_error(model_path.string() + ": write failed");
}

SentencePieceModel::SentencePieceModel(const std::filesystem::path& model_path)
    : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()), path_(model_path.string()) {
  if (!std::filesystem::exists(model_path))
    throw std::runtime_error(path_ + ": SentencePiece model not found; train one first (normlab data prepare)");
  auto st = sp_->Load(path_);
  if (!st.ok()) throw std::runtime_error(path_ + ": not a SentencePiece model: " + st.ToString());
}

SentencePieceModel::~SentencePieceModel() = default;

std::vector<std::string> SentencePieceModel::encode(const std::string& text) const {
  std::vector<std::string> pieces;
  auto st = sp_->Encode(text, &pieces);
  if (!st.ok()) throw std::runtime_error(path_ + ": encode failed: " + st.ToString());
  return pieces;
}

std::string SentencePieceModel::decode(const std::vector<std::string>& pieces) const {
  std::string out;
  auto st = sp_->Decode(pieces, &out);
  if (!st.ok()) throw std::runtime_error(path_ + ": decode failed: " + st.ToString());
  return out;
}

int SentencePieceModel::size() const { return sp_->GetPieceSize(); }

}  // namespace nl::data
