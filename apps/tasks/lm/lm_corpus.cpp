#include "tasks/lm/lm_corpus.h"

#include <array>
#include <stdexcept>

#include "data/text/dictionary.h"
#include "data/text/line_reader.h"
#include "data/text/lm_corpus.h"

namespace nlapp {
namespace fs = std::filesystem;

const std::vector<int32_t>& LmCorpus::split(const std::string& name) const {
  if (name == "train") return train;
  if (name == "valid") return valid;
  if (name == "test") return test;
  throw std::invalid_argument("lm: unknown split '" + name + "' (valid: train, valid, test)");
}

const std::vector<std::string>& lm_dataset_names() {
  static const std::vector<std::string> n = {"ptb", "tinyshakespeare", "enwik8"};
  return n;
}

namespace {
fs::path need(const fs::path& p, const std::string& how) {
  if (!fs::is_regular_file(p)) throw std::runtime_error("lm: data file " + p.string() + " not found; " + how);
  return p;
}

LmCorpus load_ptb(const fs::path& dir) {
  const std::string how = "pass --data with the folder of Mikolov's PTB (ptb.train.txt.gz, ptb.valid.txt, ptb.test.txt; "
                          "../shared/data/ptb-lm, see its SOURCE.md)";
  auto train = nl::data::read_word_corpus(need(dir / "ptb.train.txt.gz", how));
  auto valid = nl::data::read_word_corpus(need(dir / "ptb.valid.txt", how));
  auto test = nl::data::read_word_corpus(need(dir / "ptb.test.txt", how));
  nl::data::Dictionary dict;
  for (const auto& line : train)
    for (const auto& w : line) dict.add_symbol(w);
  dict.finalize();
  LmCorpus c;
  c.dataset = "ptb";
  c.source = dir;
  c.word_level = true;
  c.vocab = dict.size();
  c.train = nl::data::word_stream(train, dict);
  c.valid = nl::data::word_stream(valid, dict, &c.n_unk);
  c.test = nl::data::word_stream(test, dict, &c.n_unk);
  return c;
}
}  // namespace

LmCorpus byte_corpus(const std::string& bytes, int64_t a, int64_t b) {
  const int64_t n = (int64_t)bytes.size();
  if (!(0 < a && a <= b && b <= n))
    throw std::invalid_argument("byte_corpus: split points " + std::to_string(a) + ", " + std::to_string(b) +
                                " do not fit a text of " + std::to_string(n) + " bytes (need 0 < a <= b <= n)");
  std::array<int32_t, 256> id{};
  for (int64_t i = 0; i < a; ++i) id[(unsigned char)bytes[(size_t)i]] = 1;
  int32_t next = 1;  // 0 = <unk>
  for (auto& x : id) x = x ? next++ : 0;
  LmCorpus c;
  c.vocab = next;
  auto part = [&](int64_t lo, int64_t hi, std::vector<int32_t>& out, bool count_unk) {
    out.reserve((size_t)(hi - lo));
    for (int64_t i = lo; i < hi; ++i) {
      out.push_back(id[(unsigned char)bytes[(size_t)i]]);
      if (count_unk && out.back() == 0) ++c.n_unk;
    }
  };
  part(0, a, c.train, false);
  part(a, b, c.valid, true);
  part(b, n, c.test, true);
  return c;
}

LmCorpus load_lm_corpus(const std::string& dataset, const fs::path& path) {
  if (dataset == "ptb") return load_ptb(path);
  if (dataset == "tinyshakespeare") {
    const fs::path file = need(path / "input.txt",
                               "pass --data with the folder of karpathy's tinyshakespeare input.txt (../shared/data/tinyshakespeare)");
    const std::string text = nl::data::read_text(file);
    // Throws naming the file when it is empty or too small for the 90/5/5 split.
    const auto sp = nl::data::contiguous_split((int64_t)text.size(), 900, 50, file.string(), "bytes");
    LmCorpus c = byte_corpus(text, sp.train_end, sp.valid_end);
    c.dataset = dataset;
    c.source = path;
    return c;
  }
  if (dataset == "enwik8") {
    const fs::path file = fs::is_directory(path) ? path / "enwik8" : path;
    const std::string text = nl::data::read_text(
        need(file, "download http://mattmahoney.net/dc/enwik8.zip, unzip it and pass --data with the path of the "
                   "100,000,000-byte file `enwik8` (or its folder)"));
    constexpr int64_t kTest = 5000000;  // Transformer-XL prep_enwik8.py: num_test_chars
    const int64_t n = (int64_t)text.size();
    if (n <= 2 * kTest)
      throw std::invalid_argument("lm: " + file.string() + " has " + std::to_string(n) +
                                  " bytes, too few for enwik8's 5M valid + 5M test split; pass the full 100,000,000-byte "
                                  "enwik8 file (or use --config tinyshakespeare for a small character corpus)");
    LmCorpus c = byte_corpus(text, n - 2 * kTest, n - kTest);
    c.dataset = dataset;
    c.source = file;
    return c;
  }
  throw std::invalid_argument("lm: unknown dataset '" + dataset + "' (valid: ptb, tinyshakespeare, enwik8)");
}

}  // namespace nlapp
