#include "data/text/classification.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "data/text/shuffle.h"
#include "data/text/utf8.h"

namespace nl::data {

namespace {
[[noreturn]] void fail(const std::string& file, std::size_t line, const std::string& what) {
  throw std::runtime_error(file + ":" + std::to_string(line) + ": " + what);
}

int32_t parse_label(std::string_view s, int num_classes, const std::string& file, std::size_t line) {
  std::string t = normalize_whitespace(s);
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
    fail(file, line, "label \"" + t + "\" is not a non-negative integer");
  long v = 0;
  if (std::from_chars(t.data(), t.data() + t.size(), v).ec != std::errc() || v >= num_classes)
    fail(file, line, "label " + t + " outside [0, " + std::to_string(num_classes) + ")");
  return static_cast<int32_t>(v);
}
}  // namespace

LabelledSentences read_label_sentence_file(const std::filesystem::path& path, int num_classes) {
  LabelledSentences out;
  LineReader r(path);
  std::string line;
  while (r.next(line)) {
    auto sep = line.find("|||");
    if (sep == std::string::npos)
      fail(path.string(), r.line_number(), "expected \"LABEL ||| sentence\", no \"|||\" found");
    out.labels.push_back(parse_label(std::string_view(line).substr(0, sep), num_classes, path.string(), r.line_number()));
    // Keep the text as in the file (only the spaces around it are trimmed), so that it equals the tree's
    // leaves joined by spaces; SST has tokens with a no-break space inside ("8\u00A01\/2").
    std::string text = line.substr(sep + 3);
    text.erase(0, text.find_first_not_of(' '));
    text.erase(text.find_last_not_of(' ') + 1);
    out.sentences.push_back(std::move(text));
  }
  return out;
}

SstTree parse_sst_tree(std::string_view s) {
  SstTree t;
  int depth = 0;
  std::size_t i = 0;
  auto skip_ws = [&] { while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i; };
  skip_ws();
  if (i >= s.size() || s[i] != '(') throw std::invalid_argument("tree must start with '('");
  while (i < s.size()) {
    skip_ws();
    if (i >= s.size()) break;
    if (s[i] == '(') {
      ++depth;
      ++i;
      std::size_t j = i;
      while (j < s.size() && s[j] != ' ' && s[j] != '(' && s[j] != ')') ++j;
      std::string_view label = s.substr(i, j - i);
      if (label.empty() || label.find_first_not_of("0123456789") != std::string_view::npos)
        throw std::invalid_argument("node label \"" + std::string(label) + "\" is not an integer at column " +
                                    std::to_string(i + 1));
      if (depth == 1 && t.label < 0 &&
          std::from_chars(label.data(), label.data() + label.size(), t.label).ec != std::errc())
        throw std::invalid_argument("node label " + std::string(label) + " is too large at column " +
                                    std::to_string(i + 1));
      i = j;
    } else if (s[i] == ')') {
      if (--depth < 0) throw std::invalid_argument("unbalanced ')' at column " + std::to_string(i + 1));
      ++i;
      if (depth == 0) {
        skip_ws();
        if (i != s.size()) throw std::invalid_argument("text after the root's closing ')'");
      }
    } else {
      std::size_t j = i;
      while (j < s.size() && s[j] != ' ' && s[j] != '(' && s[j] != ')') ++j;
      t.leaves.emplace_back(s.substr(i, j - i));
      i = j;
    }
  }
  if (depth != 0) throw std::invalid_argument("unbalanced parentheses: " + std::to_string(depth) + " unclosed");
  return t;
}

LabelledSentences read_sst_tree_file(const std::filesystem::path& path, int num_classes) {
  LabelledSentences out;
  LineReader r(path);
  std::string line;
  while (r.next(line)) {
    SstTree t;
    try {
      t = parse_sst_tree(line);
    } catch (const std::invalid_argument& e) {
      fail(path.string(), r.line_number(), std::string("malformed SST tree: ") + e.what());
    }
    if (t.label < 0 || t.label >= num_classes)
      fail(path.string(), r.line_number(), "root label outside [0, " + std::to_string(num_classes) + ")");
    std::string sent;
    for (const auto& w : t.leaves) {
      if (!sent.empty()) sent.push_back(' ');
      sent += w;
    }
    out.labels.push_back(t.label);
    out.sentences.push_back(std::move(sent));
  }
  return out;
}

LabelledSentences read_rt_polarity(const std::filesystem::path& pos_path, const std::filesystem::path& neg_path,
                                   bool latin1) {
  ReadOptions o;
  if (latin1) o.encoding = Encoding::Latin1;
  LabelledSentences out;
  auto add = [&](const std::filesystem::path& p, int32_t label) {
    for (auto& s : read_lines(p, o)) {
      if (latin1) {
        std::string fixed;
        for (std::size_t i = 0; i < s.size(); ++i) {
          if (i + 1 < s.size() && static_cast<unsigned char>(s[i]) == 0xC2 && static_cast<unsigned char>(s[i + 1]) == 0x85) {
            fixed.push_back(' ');
            ++i;
          } else {
            fixed.push_back(s[i]);
          }
        }
        s = std::move(fixed);
      }
      out.sentences.push_back(normalize_whitespace(s));
      out.labels.push_back(label);
    }
  };
  add(pos_path, 1);
  add(neg_path, 0);
  return out;
}

SplitIds random_split(int64_t n, int64_t n_train, int64_t n_valid, int64_t n_test, uint64_t seed) {
  if (n_train < 0 || n_valid < 0 || n_test < 0)
    throw std::invalid_argument("random_split: sizes " + std::to_string(n_train) + "/" + std::to_string(n_valid) +
                                "/" + std::to_string(n_test) + " must not be negative");
  if (n_train + n_valid + n_test > n)
    throw std::invalid_argument("random_split: a " + std::to_string(n_train) + "/" + std::to_string(n_valid) + "/" +
                                std::to_string(n_test) + " train/valid/test split needs " +
                                std::to_string(n_train + n_valid + n_test) + " examples, but there are only " +
                                std::to_string(n));
  auto p = seeded_permutation(n, seed);
  SplitIds s;
  auto take = [&](std::vector<int64_t>& dst, int64_t from, int64_t to) {
    dst.assign(p.begin() + from, p.begin() + to);
    std::sort(dst.begin(), dst.end());
  };
  take(s.train, 0, n_train);
  take(s.valid, n_train, n_train + n_valid);
  take(s.test, n_train + n_valid, n_train + n_valid + n_test);
  take(s.unused, n_train + n_valid + n_test, n);
  return s;
}

}  // namespace nl::data
