#include "tasks/parse/parse_data.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "data/text/arc_standard.h"
#include "data/text/parser_features.h"
#include "data/text/zip_archive.h"

namespace nlapp {
namespace fs = std::filesystem;
using nl::data::ConlluSentence;

namespace {

const char* kGetData =
    "pass --data with a UD treebank folder holding <name>-train.conllu[.gz], <name>-dev.conllu[.gz] and "
    "<name>-test.conllu[.gz] (UD English EWT, github.com/UniversalDependencies/UD_English-EWT; here "
    "../shared/data/ud-english-ewt) or NLTK's dependency_treebank.zip (../shared/data/ptb-dep-nltk)";

// The file of `split` in a UD folder (nl::data::find_conllu_split), or an error with the fix.
fs::path find_split(const fs::path& dir, const std::string& split) {
  const fs::path p = nl::data::find_conllu_split(dir, split);
  if (p.empty())
    throw std::runtime_error("treebank folder '" + dir.string() + "' has no *-" + split + ".conllu[.gz] file: " + kGetData);
  return p;
}

Treebank load_malt_zip(const fs::path& zip) {
  Treebank tb;
  tb.name = "NLTK WSJ sample (files 1-159 / 160-179 / 180-199)";
  tb.labelled = false;
  for (const auto& m : nl::data::read_zip(zip)) {
    const std::string base = fs::path(m.name).filename().string();
    if (base.size() != 11 || base.rfind("wsj_", 0) != 0 || base.substr(8) != ".dp") continue;
    const int num = std::stoi(base.substr(4, 4));
    auto& dst = num <= 159 ? tb.train : num <= 179 ? tb.dev : tb.test;
    for (auto& s : nl::data::parse_malt_tab(m.data, m.name)) dst.push_back(std::move(s));
  }
  if (tb.train.empty() || tb.dev.empty() || tb.test.empty())
    throw std::runtime_error("'" + zip.string() + "' holds no wsj_NNNN.dp files for all three splits: " + kGetData);
  for (const auto* split : {&tb.train, &tb.dev, &tb.test})
    for (const auto& s : *split)
      for (const auto& w : s.words)
        if (!w.deprel.empty() && w.deprel != "_") tb.labelled = true;
  return tb;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

int32_t lookup(const std::unordered_map<std::string, int32_t>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? nl::data::kParseUnk : it->second;
}

}  // namespace

Treebank load_treebank(const std::string& data) {
  const fs::path p = data;
  if (!fs::exists(p)) throw std::runtime_error("treebank '" + data + "' not found: " + kGetData);
  if (fs::is_regular_file(p) && p.extension() == ".zip") return load_malt_zip(p);
  if (!fs::is_directory(p)) throw std::runtime_error("treebank '" + data + "' is neither a folder nor a .zip: " + kGetData);
  Treebank tb;
  const std::string folder = fs::weakly_canonical(p).filename().string();
  tb.name = folder.find("ewt") != std::string::npos ? "UD English EWT" : folder;
  tb.train = nl::data::read_conllu(find_split(p, "train"));
  tb.dev = nl::data::read_conllu(find_split(p, "dev"));
  tb.test = nl::data::read_conllu(find_split(p, "test"));
  return tb;
}

std::string arc_label(const nl::data::ConlluWord& w) { return w.deprel.empty() || w.deprel == "_" ? "dep" : w.deprel; }

EncodedSentence ParserVocab::encode(const ConlluSentence& s) const {
  EncodedSentence e;
  e.words.reserve(s.words.size() + 1);
  e.tags.reserve(s.words.size() + 1);
  e.words.push_back(nl::data::kParseRoot);
  e.tags.push_back(nl::data::kParseRoot);
  for (const auto& w : s.words) {
    e.words.push_back(lookup(word, lower(w.form)));
    e.tags.push_back(lookup(tag, tag_of(w)));
  }
  return e;
}

ParserVocab build_parser_vocab(const std::vector<ConlluSentence>& train, int64_t min_word_count, bool use_upos) {
  ParserVocab v;
  v.use_upos = use_upos;
  std::unordered_map<std::string, int64_t> counts;
  std::vector<std::string> order;  // first occurrence order keeps ids deterministic
  v.label_names.push_back("");
  for (const auto& s : train)
    for (const auto& w : s.words) {
      const std::string f = lower(w.form);
      if (counts[f]++ == 0) order.push_back(f);
      const std::string& t = v.tag_of(w);
      if (!t.empty() && t != "_" && !v.tag.count(t)) v.tag.emplace(t, static_cast<int32_t>(v.tag.size()) + 3);
      const std::string l = arc_label(w);
      if (!v.label.count(l)) {
        v.label.emplace(l, static_cast<int32_t>(v.label_names.size()));
        v.label_names.push_back(l);
      }
    }
  if (v.tag.empty())
    throw std::runtime_error(std::string("the training data has no ") + (use_upos ? "UPOS" : "XPOS") +
                             " tags: use --pos " + (use_upos ? "xpos" : "upos"));
  for (const auto& f : order)
    if (counts[f] >= min_word_count) v.word.emplace(f, static_cast<int32_t>(v.word.size()) + 3);
  return v;
}

OracleExamples oracle_examples(const std::vector<ConlluSentence>& train, const ParserVocab& v) {
  using nl::data::Move;
  OracleExamples ex;
  const int32_t L = v.labels() - 1;
  int32_t f[nl::data::kParseFeatures];
  for (const auto& s : train) {
    const std::vector<int> heads = s.heads();
    if (!nl::data::is_projective(heads)) {
      ++ex.skipped;
      continue;
    }
    std::vector<std::string> labels;
    for (const auto& w : s.words) labels.push_back(arc_label(w));
    const EncodedSentence e = v.encode(s);
    nl::data::ArcStandardState c(static_cast<int>(s.words.size()));
    for (const auto& t : nl::data::arc_standard_oracle(heads, labels)) {
      nl::data::parser_features(c, e.words.data(), e.tags.data(), f);
      ex.features.insert(ex.features.end(), f, f + nl::data::kParseFeatures);
      const int32_t l = t.move == Move::Shift ? 0 : v.label.at(t.label);
      ex.targets.push_back(t.move == Move::Shift ? 0 : t.move == Move::LeftArc ? l : L + l);
      c.apply(t.move, l);
    }
  }
  return ex;
}

}  // namespace nlapp
