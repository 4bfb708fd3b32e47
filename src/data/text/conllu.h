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

/// What keeps `heads` (heads[i] = head of word i+1, 0 = ROOT) from being a dependency tree, in words
/// ("words 2 -> 4 -> 2 form a cycle", "word 3 is its own head", "no word has HEAD 0 (no root)", and with
/// `single_root` "2 words have HEAD 0 (words 1, 5); a UD tree has exactly one root"); "" for a tree.
/// Heads must already be within [0, n].
std::string tree_problem(const std::vector<int>& heads, bool single_root);

/// The file of `split` ("train", "dev", "test") in a UD treebank folder: any <name>-<split>.conllu or
/// <name>-<split>.conllu.gz (the first by name when several match); empty when there is none. What both
/// `normlab data prepare ud-ewt` and `normlab train parse` read.
std::filesystem::path find_conllu_split(const std::filesystem::path& dir, const std::string& split);

/// Reads all sentences of a .conllu or .conllu.gz file. Throws std::runtime_error naming file and
/// line for: a line without 10 tab-separated columns, a non-numeric ID or HEAD, IDs not 1, 2, 3, ...
/// in order, a HEAD outside [0, n], or invalid UTF-8; and naming file, line and sent_id for a sentence
/// whose heads are no tree with one root (tree_problem). A final sentence without a blank line is accepted.
std::vector<ConlluSentence> read_conllu(const std::filesystem::path& path);

/// Parses Malt-TAB text (NLTK's dependency_treebank .dp files): one word per line "FORM<TAB>POS<TAB>HEAD"
/// with an optional 4th column DEPREL, blank lines between sentences. POS goes to `xpos` (UPOS stays
/// empty). `source` names the text in errors, which give "source:line" for a wrong column count, a
/// non-integer HEAD, a HEAD outside [0, n], or heads that are no tree (a cycle or no root; several roots
/// are allowed, as in the NLTK treebank).
std::vector<ConlluSentence> parse_malt_tab(const std::string& text, const std::string& source);

}  // namespace nl::data
