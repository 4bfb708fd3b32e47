// `normlab data prepare` for classification (sst5, rt), language modelling (ptb-lm, tinyshakespeare)
// and dependency parsing (ud-ewt, ptb-dep).
#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>
#include <utility>

#include "data/text/arc_standard.h"
#include "data/text/classification.h"
#include "data/text/conllu.h"
#include "data/text/dictionary.h"
#include "data/text/lm_corpus.h"
#include "data/text/prepare.h"
#include "data/text/utf8.h"
#include "data/text/zip_archive.h"

namespace nl::data {

namespace {
// RT split sizes of Xu et al. (2019): 8,608 / 964 / 1,089 (one of the 10,662 examples is left unused).
constexpr int64_t kRtTrain = 8608, kRtValid = 964, kRtTest = 1089;

void write_labelled(const PrepareOptions& o, nlohmann::json& summary, const std::string& split,
                    const LabelledSentences& data, const Dictionary& dict, int num_classes) {
  int64_t unk = 0;
  std::vector<std::vector<int32_t>> seqs, labels;
  for (std::size_t i = 0; i < data.size(); ++i) {
    seqs.push_back(dict.encode_line(data.sentences[i], true, &unk));
    labels.push_back({data.labels[i]});
  }
  summary["splits"].push_back(write_split(o, split, split + ".input.bin", seqs, unk, dict.size()));
  write_split(o, split + ".label", split + ".label.bin", labels, 0, num_classes);
  std::vector<int64_t> hist(static_cast<std::size_t>(num_classes), 0);
  for (int32_t l : data.labels) ++hist[static_cast<std::size_t>(l)];
  summary["label_counts"][split] = hist;
}

}  // namespace

nlohmann::json prepare_classification(const std::string& task, const PrepareOptions& o) {
  nlohmann::json summary;
  summary["splits"] = nlohmann::json::array();
  std::vector<std::pair<std::string, LabelledSentences>> splits;
  int num_classes;
  if (task == "sst5") {
    num_classes = 5;
    if (o.format != "sentences" && o.format != "trees")
      throw std::runtime_error("--format " + o.format + ": sst5 accepts sentences (LABEL ||| text) or trees");
    for (const char* s : {"train", "dev", "test"}) {
      std::string name = std::string(s) == "dev" ? "valid" : s;
      auto data = o.format == "trees" ? read_sst_tree_file(require_data_file(o.data_dir / (std::string(s) + ".txt")), 5)
                                      : read_label_sentence_file(require_data_file(o.data_dir / (std::string(s) + ".sentences.txt")), 5);
      splits.emplace_back(name, std::move(data));
    }
    summary["format"] = o.format;
    summary["notes"] = {"labels 0..4 = very negative .. very positive; sentence-level (root) labels"};
  } else {  // rt
    num_classes = 2;
    if (o.copy != "kim" && o.copy != "nltk") throw std::runtime_error("--copy " + o.copy + ": use kim or nltk");
    bool kim = o.copy == "kim";
    auto dir = kim ? o.data_dir : o.data_dir / "utf8";
    const auto pos = require_data_file(dir / "rt-polarity.pos"), neg = require_data_file(dir / "rt-polarity.neg");
    auto all = read_rt_polarity(pos, neg, kim);
    constexpr int64_t kRtNeeded = kRtTrain + kRtValid + kRtTest;
    if (static_cast<int64_t>(all.size()) < kRtNeeded) {
      const auto n_pos = std::count(all.labels.begin(), all.labels.end(), 1);
      auto lines = [](const std::filesystem::path& p, int64_t n) {
        return p.string() + (n == 0 ? " is empty" : " has " + std::to_string(n) + " lines");
      };
      throw std::runtime_error(lines(pos, n_pos) + " and " + lines(neg, static_cast<int64_t>(all.size()) - n_pos) +
                               ": " + std::to_string(all.size()) + " sentences in all, too few for the fixed " +
                               std::to_string(kRtTrain) + "/" + std::to_string(kRtValid) + "/" + std::to_string(kRtTest) +
                               " train/valid/test split (" + std::to_string(kRtNeeded) +
                               "; the RT polarity data set has 5331 lines in each file); restore the data set "
                               "(../shared/data/rt-polarity, see its SOURCE.md)");
    }
    auto ids = random_split(static_cast<int64_t>(all.size()), kRtTrain, kRtValid, kRtTest, o.seed);
    auto subset = [&](const std::vector<int64_t>& v) {
      LabelledSentences s;
      for (int64_t i : v) {
        s.sentences.push_back(all.sentences[static_cast<std::size_t>(i)]);
        s.labels.push_back(all.labels[static_cast<std::size_t>(i)]);
      }
      return s;
    };
    splits = {{"train", subset(ids.train)}, {"valid", subset(ids.valid)}, {"test", subset(ids.test)}};
    nlohmann::json sj = {{"seed", o.seed}, {"generator", "std::mt19937_64 + Fisher-Yates (shuffle.h)"},
                         {"id_rule", "id i < 5331: line i+1 of rt-polarity.pos (label 1); else line i-5330 of rt-polarity.neg (label 0)"},
                         {"train", ids.train}, {"valid", ids.valid}, {"test", ids.test}, {"unused", ids.unused}};
    std::ofstream f(o.out_dir / "split_ids.json");
    f << sj.dump() << "\n";
    if (!f) throw std::runtime_error((o.out_dir / "split_ids.json").string() + ": write failed");
    summary["split"] = {{"seed", o.seed}, {"sizes", {kRtTrain, kRtValid, kRtTest}}, {"unused", ids.unused},
                        {"ids_file", "split_ids.json"}, {"copy", o.copy}};
    summary["notes"] = {"no official split: seeded random 8608/964/1089 split (Xu et al. 2019 sizes), ids in split_ids.json",
                        "labels: 1 = positive (rt-polarity.pos), 0 = negative"};
  }
  Dictionary dict;
  for (const auto& s : splits[0].second.sentences) dict.add_line(s);
  dict.finalize(o.threshold, o.nwords, o.padding_factor);
  dict.save(o.out_dir / "dict.txt");
  summary["dictionaries"]["input"] = {{"file", "dict.txt"}, {"size", dict.size()}};
  summary["num_classes"] = num_classes;
  for (const auto& [name, data] : splits) write_labelled(o, summary, name, data, dict, num_classes);
  return summary;
}

nlohmann::json prepare_lm(const std::string& task, const PrepareOptions& o) {
  nlohmann::json summary;
  summary["splits"] = nlohmann::json::array();
  if (task == "ptb-lm") {
    std::vector<std::pair<std::string, std::vector<std::vector<std::string>>>> splits;
    splits.emplace_back("train", read_word_corpus(require_data_file(o.data_dir / "ptb.train.txt.gz")));
    splits.emplace_back("valid", read_word_corpus(require_data_file(o.data_dir / "ptb.valid.txt")));
    splits.emplace_back("test", read_word_corpus(require_data_file(o.data_dir / "ptb.test.txt")));
    Dictionary dict;
    for (const auto& l : splits[0].second)
      for (const auto& w : l) dict.add_symbol(w);
    dict.finalize(o.threshold, o.nwords, o.padding_factor);
    dict.save(o.out_dir / "dict.txt");
    summary["dictionaries"]["word"] = {{"file", "dict.txt"}, {"size", dict.size()}};
    for (const auto& [name, lines] : splits) {
      int64_t unk = 0;
      std::vector<std::vector<int32_t>> seqs;
      for (const auto& l : lines) seqs.push_back(dict.encode(l, true, &unk));
      summary["splits"].push_back(write_split(o, name, name + ".bin", seqs, unk, dict.size()));
    }
    summary["notes"] = {"one sequence per line with </s> appended (= PTB's <eos>); the LM stream is the concatenation",
                        "PTB's own <unk> token maps to fairseq <unk> (id 3), so unk % is PTB's rare-word rate"};
  } else {  // tinyshakespeare
    const auto input = require_data_file(o.data_dir / "input.txt");
    auto chars = read_char_corpus(input);
    auto sp = contiguous_split(static_cast<int64_t>(chars.size()), 900, 50, input.string(), "characters");
    Dictionary dict;
    for (int64_t i = 0; i < sp.train_end; ++i) dict.add_symbol(char_symbol(chars[static_cast<std::size_t>(i)]));
    dict.finalize(o.threshold, o.nwords, o.padding_factor);
    dict.save(o.out_dir / "dict.txt");
    summary["dictionaries"]["char"] = {{"file", "dict.txt"}, {"size", dict.size()}};
    const std::array<std::pair<const char*, std::pair<int64_t, int64_t>>, 3> parts{
        {{"train", {0, sp.train_end}}, {"valid", {sp.train_end, sp.valid_end}}, {"test", {sp.valid_end, sp.total}}}};
    for (const auto& [name, range] : parts) {
      int64_t unk = 0;
      std::vector<std::string> syms;
      for (int64_t i = range.first; i < range.second; ++i) syms.push_back(char_symbol(chars[static_cast<std::size_t>(i)]));
      std::vector<std::vector<int32_t>> seqs{dict.encode(syms, false, &unk)};
      summary["splits"].push_back(write_split(o, name, std::string(name) + ".bin", seqs, unk, dict.size()));
      summary["split"][name] = {{"char_begin", range.first}, {"char_end", range.second}};
    }
    summary["notes"] = {"contiguous 90/5/5 split of the character stream: [0, floor(0.90 N)), [.., floor(0.95 N)), [.., N)",
                        "one sequence per split (the whole stream, newlines included, no </s>); whitespace/control chars are <0xNN> in dict.txt"};
  }
  return summary;
}

nlohmann::json prepare_conllu(const std::string& task, const PrepareOptions& o) {
  nlohmann::json summary;
  summary["splits"] = nlohmann::json::array();
  std::vector<std::pair<std::string, std::vector<ConlluSentence>>> splits;
  std::vector<std::string> fields{"word", "upos", "xpos", "deprel"};
  if (task == "ud-ewt") {
    // The same files `normlab train parse` reads: any <name>-{train,dev,test}.conllu[.gz].
    const std::pair<const char*, std::string> kFiles[] = {{"train", "train"}, {"valid", "dev"}, {"test", "test"}};
    for (const auto& [split, file] : kFiles) {
      const auto p = find_conllu_split(o.data_dir, file);
      if (p.empty())
        throw std::runtime_error("'" + o.data_dir.string() + "' has no *-" + file + ".conllu[.gz] file: pass --data with a "
                                 "UD treebank folder (e.g. ../shared/data/ud-english-ewt)");
      splits.emplace_back(split, read_conllu(p));
    }
  } else {  // ptb-dep: NLTK's WSJ sample, split by file number
    fields = {"word", "xpos"};
    splits = {{"train", {}}, {"valid", {}}, {"test", {}}};
    auto members = read_zip(require_data_file(o.data_dir / "dependency_treebank.zip"));
    std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    int files = 0;
    for (const auto& m : members) {
      auto slash = m.name.rfind('/');
      std::string base = m.name.substr(slash == std::string::npos ? 0 : slash + 1);
      if (base.size() != 11 || base.rfind("wsj_", 0) != 0 || base.substr(8) != ".dp") continue;
      int num = std::stoi(base.substr(4, 4));
      auto sents = parse_malt_tab(m.data, (o.data_dir / "dependency_treebank.zip").string() + "!" + m.name);
      auto& dst = splits[num <= 159 ? 0 : num <= 179 ? 1 : 2].second;
      dst.insert(dst.end(), std::make_move_iterator(sents.begin()), std::make_move_iterator(sents.end()));
      ++files;
    }
    if (files == 0) throw std::runtime_error((o.data_dir / "dependency_treebank.zip").string() + ": no wsj_NNNN.dp members found");
    summary["split"] = {{"train", "wsj_0001-0159"}, {"valid", "wsj_0160-0179"}, {"test", "wsj_0180-0199"}, {"files", files}};
  }
  std::map<std::string, Dictionary> dicts;  // word, upos, xpos, deprel
  auto field = [](const ConlluWord& w, const std::string& f) -> const std::string& {
    return f == "word" ? w.form : f == "upos" ? w.upos : f == "xpos" ? w.xpos : w.deprel;
  };
  for (const auto& f : fields) {
    Dictionary d;
    for (const auto& s : splits[0].second)
      for (const auto& w : s.words) d.add_symbol(field(w, f));
    if (f == "word") d.finalize(o.threshold, o.nwords, o.padding_factor);
    else d.finalize();
    d.save(o.out_dir / ("dict." + f + ".txt"));
    summary["dictionaries"][f] = {{"file", "dict." + f + ".txt"}, {"size", d.size()}};
    dicts.emplace(f, std::move(d));
  }
  for (const auto& [name, sents] : splits) {
    int64_t non_proj = 0, mwt = 0, empty = 0;
    for (const auto& f : fields) {
      const auto& d = dicts.at(f);
      int64_t unk = 0;
      std::vector<std::vector<int32_t>> seqs;
      for (const auto& s : sents) {
        std::vector<std::string> v;
        for (const auto& w : s.words) v.push_back(field(w, f));
        seqs.push_back(d.encode(v, false, &unk));
      }
      auto j = write_split(o, name + "." + f, name + "." + f + ".bin", seqs, unk, d.size());
      if (f == "word") summary["splits"].push_back(j);
    }
    std::vector<std::vector<int32_t>> heads;
    for (const auto& s : sents) {
      std::vector<int32_t> h(s.words.size());
      for (std::size_t i = 0; i < s.words.size(); ++i) h[i] = s.words[i].head;
      heads.push_back(std::move(h));
      non_proj += is_projective(s.heads()) ? 0 : 1;
      mwt += s.multiword_tokens;
      empty += s.empty_nodes;
    }
    write_split(o, name + ".head", name + ".head.bin", heads, 0, 0);
    summary["parse_stats"][name] = {{"non_projective_sentences", non_proj}, {"multiword_tokens", mwt}, {"empty_nodes", empty}};
  }
  if (task == "ud-ewt")
    summary["notes"] = {"tokens = syntactic words (integer-ID lines); multiword-token lines and empty nodes skipped",
                        "per split: <split>.{word,upos,xpos,deprel}.bin (dict.<field>.txt ids, no </s>) and <split>.head.bin (0 = ROOT)"};
  else
    summary["notes"] = {"NLTK WSJ sample (sections 00-01), no standard split: files wsj_0001-0159 / 0160-0179 / 0180-0199",
                        "no dependency labels (UAS only); per split: <split>.{word,xpos}.bin and <split>.head.bin (0 = ROOT)"};
  return summary;
}

}  // namespace nl::data
