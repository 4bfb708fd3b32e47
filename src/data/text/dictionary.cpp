#include "data/text/dictionary.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <numeric>
#include <stdexcept>

#include "data/text/line_reader.h"
#include "data/text/utf8.h"

namespace nl::data {

Dictionary::Dictionary() {
  for (const char* s : {"<s>", "<pad>", "</s>", "<unk>"}) {
    index_.emplace(s, static_cast<int32_t>(symbols_.size()));
    symbols_.emplace_back(s);
    counts_.push_back(0);
  }
}

int32_t Dictionary::add_symbol(const std::string& symbol, int64_t n) {
  auto it = index_.find(symbol);
  if (it != index_.end()) {
    counts_[static_cast<std::size_t>(it->second)] += n;
    return it->second;
  }
  int32_t id = size();
  index_.emplace(symbol, id);
  symbols_.push_back(symbol);
  counts_.push_back(n);
  return id;
}

void Dictionary::add_line(std::string_view line) {
  for (const auto& t : split_whitespace(line)) add_symbol(t);
}

void Dictionary::finalize(int64_t threshold, int64_t nwords, int padding_factor) {
  std::vector<std::size_t> order(symbols_.size() - kNumSpecial);
  std::iota(order.begin(), order.end(), kNumSpecial);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (counts_[a] != counts_[b]) return counts_[a] > counts_[b];
    return symbols_[a] < symbols_[b];
  });
  std::vector<std::string> syms(symbols_.begin(), symbols_.begin() + kNumSpecial);
  std::vector<int64_t> cnts(counts_.begin(), counts_.begin() + kNumSpecial);
  const std::size_t limit = nwords > 0 ? static_cast<std::size_t>(nwords) : SIZE_MAX;
  for (std::size_t i : order) {
    if (syms.size() >= limit) break;
    if (counts_[i] < threshold) break;  // sorted by count: the rest are rarer
    syms.push_back(symbols_[i]);
    cnts.push_back(counts_[i]);
  }
  if (padding_factor > 1) {
    int k = 0;
    while (syms.size() % static_cast<std::size_t>(padding_factor) != 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "madeupword%04d", k++);
      syms.emplace_back(buf);
      cnts.push_back(0);
    }
  }
  symbols_ = std::move(syms);
  counts_ = std::move(cnts);
  index_.clear();
  for (std::size_t i = 0; i < symbols_.size(); ++i) index_.emplace(symbols_[i], static_cast<int32_t>(i));
}

int32_t Dictionary::index(std::string_view symbol) const {
  auto it = index_.find(std::string(symbol));
  return it == index_.end() ? kUnk : it->second;
}

bool Dictionary::contains(std::string_view symbol) const { return index_.count(std::string(symbol)) > 0; }

const std::string& Dictionary::symbol(int32_t id) const {
  if (id < 0 || id >= size())
    throw std::out_of_range("Dictionary::symbol: id " + std::to_string(id) + " outside [0, " +
                            std::to_string(size()) + ")");
  return symbols_[static_cast<std::size_t>(id)];
}

std::vector<int32_t> Dictionary::encode(const std::vector<std::string>& tokens, bool append_eos,
                                        int64_t* n_unk) const {
  std::vector<int32_t> ids;
  ids.reserve(tokens.size() + 1);
  int64_t unk = 0;
  for (const auto& t : tokens) {
    int32_t id = index(t);
    if (id == kUnk) ++unk;
    ids.push_back(id);
  }
  if (append_eos) ids.push_back(kEos);
  if (n_unk) *n_unk += unk;
  return ids;
}

std::vector<int32_t> Dictionary::encode_line(std::string_view line, bool append_eos, int64_t* n_unk) const {
  return encode(split_whitespace(line), append_eos, n_unk);
}

std::string Dictionary::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    int32_t id = ids[i];
    if (id == kEos) break;
    if (id == kPad || (i == 0 && id == kBos)) continue;
    if (!out.empty()) out.push_back(' ');
    out += symbol(id);
  }
  return out;
}

void Dictionary::save(const std::filesystem::path& path) const {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path.string() + ": cannot open for writing; check that the folder exists");
  for (std::size_t i = kNumSpecial; i < symbols_.size(); ++i) {
    const auto& s = symbols_[i];
    if (s.empty() || s.find_first_of(" \t\n\r\v\f") != std::string::npos)
      throw std::runtime_error(path.string() + ": symbol id " + std::to_string(i) +
                               " is empty or contains whitespace and cannot be written to dict.txt; "
                               "escape such symbols before adding them");
    f << s << ' ' << counts_[i] << '\n';
  }
  if (!f) throw std::runtime_error(path.string() + ": write failed (disk full?)");
}

Dictionary Dictionary::load(const std::filesystem::path& path) {
  Dictionary d;
  LineReader r(path);
  std::string line;
  while (r.next(line)) {
    if (line.empty()) continue;
    auto sp = line.rfind(' ');
    std::string sym, cnt;
    if (sp == std::string::npos || sp == 0)
      throw std::runtime_error(path.string() + ":" + std::to_string(r.line_number()) +
                               ": expected \"<symbol> <count>\" in dict.txt, got \"" + line + "\"");
    sym = line.substr(0, sp);
    cnt = line.substr(sp + 1);
    std::string flag;
    if (cnt == "#fairseq:overwrite") {  // fairseq's flag: "<sym> <count> #fairseq:overwrite"
      auto sp2 = sym.rfind(' ');
      if (sp2 == std::string::npos)
        throw std::runtime_error(path.string() + ":" + std::to_string(r.line_number()) + ": malformed line");
      flag = cnt;
      cnt = sym.substr(sp2 + 1);
      sym = sym.substr(0, sp2);
    }
    int64_t c = 0;
    const auto parsed = std::from_chars(cnt.data(), cnt.data() + cnt.size(), c);
    if (parsed.ec == std::errc::result_out_of_range)
      throw std::runtime_error(path.string() + ":" + std::to_string(r.line_number()) + ": count \"" + cnt +
                               "\" is out of the 64-bit integer range");
    if (cnt.empty() || parsed.ec != std::errc() || parsed.ptr != cnt.data() + cnt.size())
      throw std::runtime_error(path.string() + ":" + std::to_string(r.line_number()) + ": count \"" + cnt +
                               "\" is not an integer (expected \"<symbol> <count>\")");
    if (d.contains(sym) && flag.empty())
      throw std::runtime_error(path.string() + ":" + std::to_string(r.line_number()) + ": duplicate symbol \"" +
                               sym + "\"; remove the duplicate line");
    if (d.contains(sym)) d.counts_[static_cast<std::size_t>(d.index(sym))] = c;
    else d.add_symbol(sym, c);
  }
  return d;
}

}  // namespace nl::data
