#pragma once
// Unlabelled and labelled attachment scores for dependency parsing. Punctuation rule (as in Chen &
// Manning 2014, who follow the standard CoNLL evaluation and exclude punctuation tokens from UAS/LAS):
// a word is punctuation, and is not scored, when its GOLD tag is punctuation: gold UPOS "PUNCT" (UD
// treebanks) or gold XPOS / PTB tag one of  ``  ''  .  ,  :  (the set in Stanford CoreNLP's neural
// dependency parser, Chen & Manning's released code). Predicted tags are never used for the decision.
#include <cstdint>
#include <string>
#include <vector>

namespace nl::metrics {

/// Whether a word with gold UPOS `upos` and gold XPOS `xpos` is punctuation under the rule above.
bool is_punctuation(const std::string& upos, const std::string& xpos);

/// Counts for UAS/LAS over a corpus; uas()/las() are percentages of `scored` words.
struct AttachmentCounts {
  int64_t scored = 0;        ///< words that are not punctuation
  int64_t head_correct = 0;  ///< scored words with the correct head
  int64_t both_correct = 0;  ///< scored words with the correct head and label
  double uas() const;
  double las() const;
  AttachmentCounts& operator+=(const AttachmentCounts& o);
};

/// Scores one sentence: all vectors have one entry per word (heads: 0 = ROOT). Labels are compared
/// exactly (full UD relation incl. subtype). Throws std::invalid_argument if the sizes differ.
AttachmentCounts attachment_counts(const std::vector<int>& gold_heads, const std::vector<std::string>& gold_labels,
                                   const std::vector<int>& pred_heads, const std::vector<std::string>& pred_labels,
                                   const std::vector<std::string>& gold_upos,
                                   const std::vector<std::string>& gold_xpos);

}  // namespace nl::metrics
