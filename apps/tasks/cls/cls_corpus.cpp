#include "tasks/cls/cls_corpus.h"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "data/text/token_dataset.h"
#include "data/text/utf8.h"
#include "tasks/prepare_hint.h"

namespace nlapp {
namespace fs = std::filesystem;

std::vector<int64_t> ClsSplit::lengths() const {
  std::vector<int64_t> l;
  l.reserve(tokens.size());
  for (const auto& t : tokens) l.push_back((int64_t)t.size());
  return l;
}

std::string cls_prepare_command(const std::string& name, const fs::path& dir) {
  const std::string src = name == "rt" ? "rt-polarity" : "sst5";
  return "`normlab data prepare " + name + " --data ../shared/data/" + src + " --out " + dir.string() + "`";
}

namespace {

// The raw data set a folder holds ("sst5" or "rt": the files `data prepare` reads), or "".
std::string raw_name(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "rt-polarity.pos", ec) || fs::exists(dir / "utf8" / "rt-polarity.pos", ec)) return "rt";
  if (fs::exists(dir / "train.sentences.txt", ec) || fs::exists(dir / "train.txt", ec)) return "sst5";
  return "";
}

// The data set a folder is meant to hold: its raw files', else guessed from its name.
std::string guess_name(const fs::path& dir) {
  if (const std::string raw = raw_name(dir); !raw.empty()) return raw;
  const std::string f = dir.filename().string();
  return f.find("rt") != std::string::npos ? "rt" : "sst5";
}

// The fix for a folder without summary.json. A folder that holds other files (the raw data set, or
// anything else) is never proposed as the --out of `data prepare`: that would write into it.
std::string missing_summary_hint(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || fs::is_empty(dir, ec))
    return "prepare it with " + cls_prepare_command(guess_name(dir), dir) + ", or pass --data with a prepared folder";
  if (const std::string raw = raw_name(dir); !raw.empty()) return raw_data_hint(dir, raw, "prepared data");
  const std::string name = guess_name(dir);
  return "'" + dir.string() + "' holds other files, not prepared classification data; prepare one with " +
         cls_prepare_command(name, fresh_prepare_out(dir, name)) + ", or pass --data with a prepared folder";
}

// The dictionary with lowercased symbols (counts of merged symbols summed) and the map old id -> new id.
std::pair<nl::data::Dictionary, std::vector<int32_t>> lowercased(const nl::data::Dictionary& cased) {
  nl::data::Dictionary lower;
  for (int32_t i = nl::data::Dictionary::kNumSpecial; i < cased.size(); ++i)
    lower.add_symbol(nl::data::utf8_lower(cased.symbol(i)), cased.count(i));
  lower.finalize();
  std::vector<int32_t> map((size_t)cased.size());
  for (int32_t i = 0; i < cased.size(); ++i)
    map[(size_t)i] = i < nl::data::Dictionary::kNumSpecial ? i : lower.index(nl::data::utf8_lower(cased.symbol(i)));
  return {std::move(lower), std::move(map)};
}

}  // namespace

std::shared_ptr<ClsCorpus> ClsCorpus::load(const fs::path& dir) {
  const fs::path summary = dir / "summary.json";
  if (!fs::exists(summary))
    throw std::runtime_error("no prepared classification data in '" + dir.string() + "' (" +
                             summary.filename().string() + " missing): " + missing_summary_hint(dir));
  nlohmann::json s;
  try {
    std::ifstream f(summary);
    s = nlohmann::json::parse(f);
  } catch (const std::exception& e) {
    throw std::runtime_error(summary.string() + " is not valid JSON (" + e.what() + "): prepare the folder again with " +
                             cls_prepare_command(guess_name(dir), dir));
  }
  auto c = std::make_shared<ClsCorpus>();
  c->dir = dir;
  c->name = s.value("task", std::string());
  if (c->name != "sst5" && c->name != "rt")
    throw std::runtime_error(dir.string() + " holds data prepared for '" + c->name +
                             "', not a classification data set: pass --data with a folder written by " +
                             cls_prepare_command("sst5", dir) + " (or rt)");
  c->num_classes = s.value("num_classes", 0);
  if (c->num_classes < 2) throw std::runtime_error(summary.string() + " gives no num_classes >= 2: the folder is corrupt; " +
                                                   "prepare it again with " + cls_prepare_command(c->name, dir));
  auto need = [&](const fs::path& p) {
    if (!fs::exists(p))
      throw std::runtime_error("'" + p.string() + "' is missing: prepare the folder again with " +
                               cls_prepare_command(c->name, dir));
    return p;
  };
  const nl::data::Dictionary cased = nl::data::Dictionary::load(need(dir / "dict.txt"));
  c->cased_vocab = cased.size();
  auto [lower, map] = lowercased(cased);
  c->dict = std::move(lower);
  for (const char* name : {"train", "valid", "test"}) {
    const nl::data::TokenDataset in(need(dir / (std::string(name) + ".input.bin")));
    const nl::data::TokenDataset lab(need(dir / (std::string(name) + ".label.bin")));
    if (in.size() != lab.size())
      throw std::runtime_error(dir.string() + ": " + name + ".input.bin and " + name + ".label.bin hold " +
                               std::to_string(in.size()) + " and " + std::to_string(lab.size()) +
                               " sentences: the folder is corrupt; prepare it again with " + cls_prepare_command(c->name, dir));
    ClsSplit sp;
    for (int64_t i = 0; i < in.size(); ++i) {
      std::vector<int32_t> ids;
      for (int32_t id : in[i]) {
        if (id < 0 || id >= cased.size())
          throw std::runtime_error(dir.string() + "/" + name + ".input.bin: id " + std::to_string(id) +
                                   " is outside dict.txt: the folder mixes two preparations; prepare it again with " +
                                   cls_prepare_command(c->name, dir));
        ids.push_back(map[(size_t)id]);
      }
      const auto l = lab[i];
      if (l.size() != 1 || l[0] < 0 || l[0] >= c->num_classes)
        throw std::runtime_error(dir.string() + "/" + name + ".label.bin: sentence " + std::to_string(i) +
                                 " has no label in [0, " + std::to_string(c->num_classes) +
                                 "): the folder is corrupt; prepare it again with " + cls_prepare_command(c->name, dir));
      sp.tokens.push_back(std::move(ids));
      sp.labels.push_back(l[0]);
    }
    c->splits[name] = std::move(sp);
  }
  return c;
}

const ClsSplit& ClsCorpus::split(const std::string& name) const {
  auto it = splits.find(name);
  if (it == splits.end())
    throw std::runtime_error("split '" + name + "' is not in " + dir.string() + " (it has train, valid and test)");
  return it->second;
}

}  // namespace nlapp
