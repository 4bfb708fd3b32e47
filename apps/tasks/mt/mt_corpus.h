#pragma once
// A prepared translation corpus (the folder `normlab data prepare multi30k|iwslt14|iwslt15` writes):
// dictionaries, token binaries per split, the SentencePiece model when one was trained, the original
// lines; plus the text <-> ids conversions translation needs (encode a source line, detokenise a
// hypothesis the way fairseq-generate does).
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/text/dictionary.h"
#include "data/text/sentencepiece_model.h"
#include "data/text/token_dataset.h"

namespace nlapp {

/// Source and target ids of one split.
struct MtSplit {
  std::unique_ptr<nl::data::TokenDataset> src, tgt;
  int64_t size() const { return src->size(); }
};

/// See the file comment.
class MtCorpus {
 public:
  /// Reads DIR/summary.json, the two dictionaries, the SentencePiece model (if any) and every split whose
  /// files exist. Throws std::runtime_error naming the missing file and the `normlab data prepare`
  /// command that writes it; for a folder that holds other files (e.g. the raw data set) that command's
  /// --out is a separate folder (data-bin/<task>, or a free sibling), never DIR itself.
  static std::shared_ptr<MtCorpus> load(const std::filesystem::path& dir);

  std::filesystem::path dir;
  std::string src_lang, tgt_lang;  ///< e.g. "en", "de"
  std::string subword;             ///< "bpe" | "unigram" (SentencePiece) | "none" (whitespace tokens)
  nl::data::Dictionary src_dict, tgt_dict;
  std::map<std::string, MtSplit> splits;  ///< "train", "valid", "test" (those present)

  /// True if `split` was prepared.
  bool has(const std::string& split) const { return splits.count(split) > 0; }
  /// The split; throws std::runtime_error naming the folder and the missing files.
  const MtSplit& split(const std::string& name) const;
  /// Source line -> ids ending in </s> (SentencePiece pieces, or whitespace tokens).
  std::vector<int32_t> encode_source(const std::string& line) const;
  /// Target ids (no </s>) -> detokenised text: SentencePiece decoding, or tokens joined by spaces with
  /// subword-nmt "@@ " markers removed (fairseq --remove-bpe).
  std::string detokenize(const std::vector<int32_t>& ids) const;
  /// The original target lines of `split` (SPLIT.SRC-TGT.TGT.txt), detokenised like hypotheses when the
  /// corpus was pre-tokenised with "@@ " markers; when that file is absent (older prepared folders),
  /// the stored ids decoded. One line per sentence.
  std::vector<std::string> references(const std::string& split) const;
  /// BLEU tokenisation that matches the corpus: "13a" for raw text (SentencePiece), "none" for
  /// pre-tokenised corpora (IWSLT14 BPE files, Moses-tokenised text), as the papers report.
  std::string bleu_tokenize() const { return subword == "none" ? "none" : "13a"; }

 private:
  std::unique_ptr<nl::data::SentencePieceModel> spm_;
};

}  // namespace nlapp
