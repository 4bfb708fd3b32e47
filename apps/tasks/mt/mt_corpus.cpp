#include "tasks/mt/mt_corpus.h"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "data/text/line_reader.h"
#include "data/text/parallel_text.h"
#include "data/text/utf8.h"
#include "tasks/prepare_hint.h"

namespace nlapp {
namespace fs = std::filesystem;

namespace {
// The raw translation data set a folder holds (the files `data prepare` reads), or "".
std::string raw_task(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "raw" / "train.en.gz", ec) || fs::exists(dir / "tok" / "train.lc.norm.tok.en", ec)) return "multi30k";
  if (fs::exists(dir / "bpe" / "valid.de", ec)) return "iwslt14";
  if (fs::exists(dir / "tst2012.en", ec)) return "iwslt15";
  return "";
}

// The fix for a folder that holds no (complete) translation corpus. A `foreign` folder (one that holds
// other files: the raw data set, or another task's prepared data such as data-bin/sst5) is never
// proposed as the --out of a new corpus: that would write into it.
std::string prepare_hint(const fs::path& dir, bool foreign = false) {
  if (!foreign)
    return "prepare one with `normlab data prepare multi30k --data ../shared/data/multi30k --out " + dir.string() +
           "` (or iwslt14 / iwslt15), or pass --data with a prepared folder";
  if (const std::string raw = raw_task(dir); !raw.empty()) return raw_data_hint(dir, raw, "a prepared corpus");
  // A new folder beside the foreign one (e.g. data-bin/multi30k beside data-bin/sst5) when that name is free.
  std::error_code ec;
  fs::path out = dir.parent_path() / "multi30k";
  if (dir.parent_path().empty() || fs::exists(out, ec)) out = fresh_prepare_out(dir, "multi30k");
  return "'" + dir.string() + "' holds other files, not a translation corpus; prepare one with `normlab data prepare " +
         "multi30k --data ../shared/data/multi30k --out " + out.string() +
         "` (or iwslt14 / iwslt15), or pass --data with a prepared folder";
}
}  // namespace

std::shared_ptr<MtCorpus> MtCorpus::load(const fs::path& dir) {
  const fs::path summary = dir / "summary.json";
  if (!fs::exists(summary))
    throw std::runtime_error("no prepared translation data in '" + dir.string() + "' (" + summary.filename().string() +
                             " missing): " + prepare_hint(dir, fs::is_directory(dir) && !fs::is_empty(dir)));
  nlohmann::json s;
  try {
    std::ifstream f(summary);
    s = nlohmann::json::parse(f);
  } catch (const std::exception& e) {
    throw std::runtime_error(summary.string() + " is not valid JSON (" + e.what() + "): " + prepare_hint(dir));
  }
  if (!s.contains("direction") || !s["direction"].is_string())
    throw std::runtime_error(summary.string() + " has no \"direction\": it is not a translation corpus; " +
                             prepare_hint(dir, true));
  auto c = std::make_shared<MtCorpus>();
  c->dir = dir;
  const std::string d = s["direction"].get<std::string>();
  const auto dash = d.find('-');
  if (dash == std::string::npos) throw std::runtime_error(summary.string() + ": bad direction '" + d + "'");
  c->src_lang = d.substr(0, dash);
  c->tgt_lang = d.substr(dash + 1);
  c->subword = s.value("subword", std::string("none"));
  auto need = [&](const fs::path& p) {
    if (!fs::exists(p)) throw std::runtime_error("'" + p.string() + "' is missing: " + prepare_hint(dir));
    return p;
  };
  c->src_dict = nl::data::Dictionary::load(need(dir / ("dict." + c->src_lang + ".txt")));
  c->tgt_dict = nl::data::Dictionary::load(need(dir / ("dict." + c->tgt_lang + ".txt")));
  if (c->subword != "none") {
    const bool joint = s.value("joint_dictionary", true);
    c->spm_ = std::make_unique<nl::data::SentencePieceModel>(
        need(dir / (joint ? std::string("spm.model") : "spm." + c->tgt_lang + ".model")));
    if (!joint) throw std::runtime_error(dir.string() + ": separate SentencePiece models are not supported by the mt task; "
                                         "prepare with a joint dictionary (the default)");
  }
  for (const char* name : {"train", "valid", "test"}) {
    const fs::path a = dir / (std::string(name) + "." + d + "." + c->src_lang + ".bin"),
                   b = dir / (std::string(name) + "." + d + "." + c->tgt_lang + ".bin");
    if (!fs::exists(a) || !fs::exists(b)) continue;
    MtSplit sp;
    sp.src = std::make_unique<nl::data::TokenDataset>(a);
    sp.tgt = std::make_unique<nl::data::TokenDataset>(b);
    if (sp.src->size() != sp.tgt->size())
      throw std::runtime_error(a.string() + " and " + b.string() + " hold " + std::to_string(sp.src->size()) + " and " +
                               std::to_string(sp.tgt->size()) + " sentences: the folder is corrupt; " + prepare_hint(dir));
    c->splits[name] = std::move(sp);
  }
  return c;
}

const MtSplit& MtCorpus::split(const std::string& name) const {
  auto it = splits.find(name);
  if (it == splits.end()) {
    std::string have;
    for (const auto& [k, v] : splits) have += (have.empty() ? "" : ", ") + k;
    throw std::runtime_error("split '" + name + "' is not in " + dir.string() + " (it has: " +
                             (have.empty() ? "none" : have) + ")" +
                             (name == "train" ? "; the IWSLT folders in ../shared/data hold only valid and test: "
                                                "train on your own copy of the corpus prepared into this layout"
                                              : ""));
  }
  return it->second;
}

std::vector<int32_t> MtCorpus::encode_source(const std::string& line) const {
  if (spm_) return src_dict.encode(spm_->encode(line), true);
  return src_dict.encode_line(line, true);
}

std::string MtCorpus::detokenize(const std::vector<int32_t>& ids) const {
  std::vector<std::string> toks;
  for (int32_t id : ids) {
    if (id == nl::data::Dictionary::kEos) break;
    if (id == nl::data::Dictionary::kPad || id == nl::data::Dictionary::kBos) continue;
    toks.push_back(tgt_dict.symbol(id));
  }
  if (spm_) return spm_->decode(toks);
  std::string s;
  for (const auto& t : toks) s += (s.empty() ? "" : " ") + t;
  return nl::data::remove_bpe(s);
}

std::vector<std::string> MtCorpus::references(const std::string& name) const {
  const MtSplit& sp = split(name);
  const fs::path txt = dir / (name + "." + src_lang + "-" + tgt_lang + "." + tgt_lang + ".txt");
  std::vector<std::string> out;
  if (fs::exists(txt)) {
    out = nl::data::read_lines(txt);
    if ((int64_t)out.size() != sp.size())
      throw std::runtime_error(txt.string() + " has " + std::to_string(out.size()) + " lines but the split holds " +
                               std::to_string(sp.size()) + " sentences: " + prepare_hint(dir));
    if (subword == "none")
      for (auto& l : out) l = nl::data::remove_bpe(l);
    return out;
  }
  for (int64_t i = 0; i < sp.size(); ++i) {
    auto v = (*sp.tgt)[i];
    out.push_back(detokenize(std::vector<int32_t>(v.begin(), v.end())));
  }
  return out;
}

}  // namespace nlapp
