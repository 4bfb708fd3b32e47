#include "data/text/lm_corpus.h"

#include <cstdio>
#include <stdexcept>

#include "data/text/line_reader.h"
#include "data/text/utf8.h"

namespace nl::data {

std::vector<std::vector<std::string>> read_word_corpus(const std::filesystem::path& path) {
  std::vector<std::vector<std::string>> out;
  LineReader r(path);
  std::string line;
  while (r.next(line)) out.push_back(split_whitespace(line));
  return out;
}

std::vector<int32_t> word_stream(const std::vector<std::vector<std::string>>& lines, const Dictionary& dict,
                                 int64_t* n_unk) {
  std::vector<int32_t> out;
  for (const auto& l : lines) {
    auto ids = dict.encode(l, true, n_unk);
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

std::vector<std::string> read_char_corpus(const std::filesystem::path& path) {
  std::string text = read_text(path);
  return utf8_code_points(text);
}

std::string char_symbol(const std::string& cp) {
  if (cp.size() == 1) {
    unsigned char c = static_cast<unsigned char>(cp[0]);
    if (c <= 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", c);
      return buf;
    }
  }
  return cp;
}

ContiguousSplit contiguous_split(int64_t n, int64_t train_permille, int64_t valid_permille, const std::string& what,
                                 const std::string& unit) {
  if (train_permille <= 0 || valid_permille < 0 || train_permille + valid_permille > 1000)
    throw std::invalid_argument("contiguous_split: fractions must satisfy 0 < train and train + valid <= 1000 per mille");
  auto at = [&](int64_t m) {
    ContiguousSplit s;
    s.total = m;
    s.train_end = m * train_permille / 1000;
    s.valid_end = m * (train_permille + valid_permille) / 1000;
    return s;
  };
  // Every part with a non-zero fraction needs 2 units: an evaluation stream scores n - 1 next-token pairs.
  constexpr int64_t kMinPart = 2;
  auto fits = [&](const ContiguousSplit& s) {
    return s.train_end >= kMinPart && (valid_permille == 0 || s.valid_end - s.train_end >= kMinPart) &&
           (train_permille + valid_permille == 1000 || s.total - s.valid_end >= kMinPart);
  };
  const ContiguousSplit s = at(n);
  if (!fits(s)) {
    int64_t need = 1;
    while (!fits(at(need))) ++need;  // at most 2000 / the smallest non-zero per mille
    auto pct = [](int64_t permille) {
      return permille % 10 == 0 ? std::to_string(permille / 10) : std::to_string(permille / 10) + "." + std::to_string(permille % 10);
    };
    const std::string split = pct(train_permille) + "/" + pct(valid_permille) + "/" +
                              pct(1000 - train_permille - valid_permille) + " % train/valid/test split";
    throw std::invalid_argument(what + (n == 0 ? " is empty (0 " + unit + ")" : " has only " + std::to_string(n) + " " + unit) +
                                ": its contiguous " + split + " needs at least " + std::to_string(need) + " " + unit +
                                " (" + std::to_string(kMinPart) + " in each part); restore the full file");
  }
  return s;
}

}  // namespace nl::data
