#pragma once
// CoNLL-U reader (https://universaldependencies.org/format.html): 10 tab-separated columns per word,
// "#" comment lines, a blank line after each sentence. Multi-word token lines ("3-4") and empty nodes
// ("8.1") are recognised and skipped for the basic tree (counted); the basic tree uses HEAD and DEPREL.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nl::data {

/// One syntactic word (integer ID line). `head` is 0 for the root, else the 1-based id of the head.
struct ConlluWord {
  int id = 0;
  std::string form, lemma, upos, xpos, feats;
  int head = 0;
  std::string deprel;
};

/// One sentence: words in id order (words[i].id == i + 1).
struct ConlluSentence {
  std::vector<ConlluWord> words;
  std::string sent_id;  ///< from "# sent_id = ..."
  std::string text;     ///< from "# text = ..."
  int multiword_tokens = 0;
  int empty_nodes = 0;
  /// Heads as a vector indexed by word position 0..n-1 (values 0..n).
  std::vector<int> heads() const;
  /// DEPREL of each word.
  std::vector<std::string> deprels() const;
};

/// Reads all sentences of a .conllu or .conllu.gz file. Throws std::runtime_error naming file and
/// line for: a line without 10 tab-separated columns, a non-numeric ID or HEAD, IDs not 1, 2, 3, ...
/// in order, a HEAD outside [0, n], or invalid UTF-8. A final sentence without a blank line is accepted.
std::vector<ConlluSentence> read_conllu(const std::filesystem::path& path);

/// Parses Malt-TAB text (NLTK's dependency_treebank .dp files): one word per line "FORM<TAB>POS<TAB>HEAD"
/// with an optional 4th column DEPREL, blank lines between sentences. POS goes to `xpos` (UPOS stays
/// empty). `source` names the text in errors, which give "source:line" for a wrong column count, a
/// non-integer HEAD, or a HEAD outside [0, n].
std::vector<ConlluSentence> parse_malt_tab(const std::string& text, const std::string& source);

}  // namespace nl::data
