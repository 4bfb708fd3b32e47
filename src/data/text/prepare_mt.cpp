// `normlab data prepare` for the machine-translation tasks: multi30k, iwslt14 (pre-BPE'd), iwslt15.
#include <fstream>
#include <stdexcept>

#include "data/text/dictionary.h"
#include "data/text/parallel_text.h"
#include "data/text/prepare.h"
#include "data/text/sentencepiece_model.h"
#include "data/text/utf8.h"

namespace nl::data {

namespace {
struct MtSplit {
  std::string name;
  std::filesystem::path l1, l2;
};
struct MtSpec {
  std::string l1, l2, default_direction, default_subword;
  std::vector<MtSplit> splits;  // splits[0] builds the dictionaries (and trains spm)
  std::vector<std::string> notes;
};

MtSpec mt_spec(const std::string& task, const PrepareOptions& o) {
  const auto& d = o.data_dir;
  MtSpec s;
  if (task == "multi30k") {
    s.l1 = "en"; s.l2 = "de"; s.default_direction = "en-de"; s.default_subword = "bpe";
    if (o.text != "raw" && o.text != "tok")
      throw std::runtime_error("--text " + o.text + ": multi30k has raw (cased) and tok (lowercased Moses) text; pass raw or tok");
    for (auto [name, stem] : {std::pair{"train", "train"}, {"valid", "val"}, {"test", "test_2016_flickr"}}) {
      if (o.text == "raw") s.splits.push_back({name, d / "raw" / (std::string(stem) + ".en.gz"), d / "raw" / (std::string(stem) + ".de.gz")});
      else s.splits.push_back({name, d / "tok" / (std::string(stem) + ".lc.norm.tok.en"), d / "tok" / (std::string(stem) + ".lc.norm.tok.de")});
    }
  } else if (task == "iwslt14") {
    s.l1 = "de"; s.l2 = "en"; s.default_direction = "de-en"; s.default_subword = "none";
    s.splits = {{"valid", d / "bpe" / "valid.de", d / "bpe" / "valid.en"}, {"test", d / "bpe" / "test.de", d / "bpe" / "test.en"}};
    s.notes.push_back("IWSLT'14 train (160239 pairs) is not in the data folder: dictionaries are built from valid; "
                      "text is fairseq's 10k-merge BPE (@@ markers; remove with remove_bpe before BLEU)");
  } else {  // iwslt15
    s.l1 = "en"; s.l2 = "vi"; s.default_direction = "en-vi"; s.default_subword = "none";
    s.splits = {{"valid", d / "tst2012.en", d / "tst2012.vi"}, {"test", d / "tst2013.en", d / "tst2013.vi"}};
    s.notes.push_back("IWSLT'15 train (~133K pairs) is not in the data folder: valid = tst2012, test = tst2013; "
                      "dictionaries are built from tst2012");
  }
  return s;
}
}  // namespace

nlohmann::json prepare_mt(const std::string& task, const PrepareOptions& o) {
  MtSpec spec = mt_spec(task, o);
  const std::string dir = o.direction.empty() ? spec.default_direction : o.direction;
  std::string src, tgt;
  if (dir == spec.l1 + "-" + spec.l2) { src = spec.l1; tgt = spec.l2; }
  else if (dir == spec.l2 + "-" + spec.l1) { src = spec.l2; tgt = spec.l1; }
  else throw std::runtime_error("--direction " + dir + ": " + task + " supports " + spec.l1 + "-" + spec.l2 + " and " +
                                spec.l2 + "-" + spec.l1);
  const std::string subword = o.subword.empty() ? spec.default_subword : o.subword;
  if (subword != "bpe" && subword != "unigram" && subword != "none")
    throw std::runtime_error("--subword " + subword + ": use bpe, unigram (SentencePiece) or none (whitespace tokens)");

  // Read every split once (checks alignment and UTF-8, strips BOMs).
  std::vector<ParallelCorpus> corpora;
  for (const auto& sp : spec.splits) {
    ParallelCorpus c = read_parallel(require_data_file(sp.l1), require_data_file(sp.l2));
    if (src != spec.l1) std::swap(c.source, c.target);
    corpora.push_back(std::move(c));
  }
  const std::string pair = src + "-" + tgt;
  nlohmann::json summary;
  summary["direction"] = pair;
  summary["subword"] = subword;
  summary["joint_dictionary"] = o.joint;
  summary["notes"] = spec.notes;

  // Optional SentencePiece model(s) trained on the first split.
  std::vector<std::unique_ptr<SentencePieceModel>> spm(2);
  if (subword != "none") {
    SentencePieceOptions so;
    so.model_type = subword;
    so.vocab_size = o.vocab_size;
    so.seed = static_cast<unsigned>(o.seed);
    const auto& tr = corpora[0];
    // The first split's files, source side first (named in SentencePiece's errors).
    const bool swapped = src != spec.l1;
    const std::string src_file = (swapped ? spec.splits[0].l2 : spec.splits[0].l1).string();
    const std::string tgt_file = (swapped ? spec.splits[0].l1 : spec.splits[0].l2).string();
    if (o.joint) {
      std::vector<std::string> all(tr.source);
      all.insert(all.end(), tr.target.begin(), tr.target.end());
      so.source = src_file + " + " + tgt_file;
      train_sentencepiece(all, o.out_dir / "spm.model", so);
      spm[0] = std::make_unique<SentencePieceModel>(o.out_dir / "spm.model");
      summary["spm_model"] = {{"file", "spm.model"}, {"type", subword}, {"vocab_size", spm[0]->size()}};
    } else {
      so.source = src_file;
      train_sentencepiece(tr.source, o.out_dir / ("spm." + src + ".model"), so);
      so.source = tgt_file;
      train_sentencepiece(tr.target, o.out_dir / ("spm." + tgt + ".model"), so);
      spm[0] = std::make_unique<SentencePieceModel>(o.out_dir / ("spm." + src + ".model"));
      spm[1] = std::make_unique<SentencePieceModel>(o.out_dir / ("spm." + tgt + ".model"));
      summary["spm_model"] = {{"files", {"spm." + src + ".model", "spm." + tgt + ".model"}}, {"type", subword}};
    }
  }
  auto tokenize = [&](const std::string& line, int side) {
    if (subword == "none") return split_whitespace(line);
    return spm[o.joint ? 0 : static_cast<std::size_t>(side)]->encode(line);
  };
  // Tokenize everything once.
  std::vector<std::array<std::vector<std::vector<std::string>>, 2>> toks(corpora.size());
  for (std::size_t k = 0; k < corpora.size(); ++k)
    for (int side = 0; side < 2; ++side) {
      const auto& lines = side == 0 ? corpora[k].source : corpora[k].target;
      for (const auto& l : lines) toks[k][static_cast<std::size_t>(side)].push_back(tokenize(l, side));
    }
  // Dictionaries from the first split.
  std::array<Dictionary, 2> dicts;
  for (int side = 0; side < 2; ++side)
    for (const auto& t : toks[0][static_cast<std::size_t>(side)])
      for (const auto& w : t) dicts[o.joint ? 0 : static_cast<std::size_t>(side)].add_symbol(w);
  dicts[0].finalize(o.threshold, o.nwords, o.padding_factor);
  if (o.joint) dicts[1] = dicts[0];
  else dicts[1].finalize(o.threshold, o.nwords, o.padding_factor);
  const std::array<std::string, 2> lang{src, tgt};
  for (int side = 0; side < 2; ++side) {
    dicts[static_cast<std::size_t>(side)].save(o.out_dir / ("dict." + lang[static_cast<std::size_t>(side)] + ".txt"));
    summary["dictionaries"][lang[static_cast<std::size_t>(side)]] = {
        {"file", "dict." + lang[static_cast<std::size_t>(side)] + ".txt"}, {"size", dicts[static_cast<std::size_t>(side)].size()}};
  }
  summary["splits"] = nlohmann::json::array();
  for (std::size_t k = 0; k < corpora.size(); ++k)
    for (int side = 0; side < 2; ++side) {
      const auto& d = dicts[static_cast<std::size_t>(side)];
      int64_t unk = 0;
      std::vector<std::vector<int32_t>> seqs;
      for (const auto& t : toks[k][static_cast<std::size_t>(side)]) seqs.push_back(d.encode(t, true, &unk));
      const std::string& l = lang[static_cast<std::size_t>(side)];
      summary["splits"].push_back(write_split(o, spec.splits[k].name + "." + l,
                                              spec.splits[k].name + "." + pair + "." + l + ".bin", seqs, unk, d.size()));
      // The untokenised lines too: BLEU references and translation demos use the original text.
      const std::string txt = spec.splits[k].name + "." + pair + "." + l + ".txt";
      std::ofstream f(o.out_dir / txt, std::ios::binary);
      for (const auto& line : side == 0 ? corpora[k].source : corpora[k].target) f << line << '\n';
      if (!f.flush()) throw std::runtime_error("cannot write " + (o.out_dir / txt).string() + " (disk full?)");
    }
  return summary;
}

}  // namespace nl::data
