#pragma once
// Data of the `parse` task: a treebank split into train/dev/test (UD CoNLL-U files, or NLTK's WSJ
// sample as a zip of Malt-TAB files with a fixed file split), the parser's vocabularies, sentences as
// id arrays, and the static-oracle transition examples (Chen & Manning 2014, §3.1).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/text/conllu.h"

namespace nlapp {

/// A treebank's three splits.
struct Treebank {
  std::string name;  ///< e.g. "UD English EWT", "NLTK WSJ sample"
  std::vector<nl::data::ConlluSentence> train, dev, test;
  bool labelled = true;  ///< false when the data has no DEPREL column (then every arc is "dep": LAS = UAS)
};

/// Loads `data`: a folder holding *-train.conllu[.gz], *-dev.conllu[.gz] and *-test.conllu[.gz] (a UD
/// treebank), or a .zip of Malt-TAB .dp files named wsj_NNNN.dp (NLTK's dependency_treebank), split by
/// file number 0001-0159 / 0160-0179 / 0180-0199 (the sample has no standard split). Throws
/// std::runtime_error naming the missing path or file and how to get the data.
Treebank load_treebank(const std::string& data);

/// One sentence as ids, position 0 = ROOT (kParseRoot).
struct EncodedSentence {
  std::vector<int32_t> words, tags;
};

/// The parser's vocabularies, built from the training split: words (lowercased, count >= min_count;
/// others map to kParseUnk), tags and arc labels. Word/tag ids start after NULL, UNK, ROOT; label ids
/// after NULL. Transition classes: 0 = SHIFT, 1 + (l-1) = LEFT-ARC(l), 1 + L + (l-1) = RIGHT-ARC(l) for
/// label id l in 1..L.
struct ParserVocab {
  std::unordered_map<std::string, int32_t> word, tag, label;
  std::vector<std::string> label_names;  ///< label_names[l] for l in 1..L; [0] = "" (NULL)
  bool use_upos = false;                 ///< tags from UPOS instead of XPOS
  int32_t words() const { return static_cast<int32_t>(word.size()) + 3; }
  int32_t tags() const { return static_cast<int32_t>(tag.size()) + 3; }
  int32_t labels() const { return static_cast<int32_t>(label_names.size()); }
  int32_t classes() const { return 1 + 2 * (labels() - 1); }
  /// The tag string of a word under use_upos.
  const std::string& tag_of(const nl::data::ConlluWord& w) const { return use_upos ? w.upos : w.xpos; }
  /// Ids of a sentence (unknown words and tags -> kParseUnk).
  EncodedSentence encode(const nl::data::ConlluSentence& s) const;
};

/// The arc label of a word: its DEPREL, or "dep" when the data has none ("" or "_").
std::string arc_label(const nl::data::ConlluWord& w);

/// Builds the vocabularies from `train`. Throws std::runtime_error when the chosen tag column is empty
/// ("_") throughout, naming the other choice.
ParserVocab build_parser_vocab(const std::vector<nl::data::ConlluSentence>& train, int64_t min_word_count, bool use_upos);

/// Static-oracle training examples of the projective sentences of `train`: features int64 [N·48] in
/// feature order, target classes [N]. `skipped` receives the number of non-projective sentences left out.
struct OracleExamples {
  std::vector<int64_t> features, targets;
  int64_t size() const { return static_cast<int64_t>(targets.size()); }
  int64_t skipped = 0;
};
OracleExamples oracle_examples(const std::vector<nl::data::ConlluSentence>& train, const ParserVocab& v);

}  // namespace nlapp
