#include "data/text/conllu.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "data/text/line_reader.h"

namespace nl::data {

std::vector<int> ConlluSentence::heads() const {
  std::vector<int> h;
  h.reserve(words.size());
  for (const auto& w : words) h.push_back(w.head);
  return h;
}

std::vector<std::string> ConlluSentence::deprels() const {
  std::vector<std::string> d;
  d.reserve(words.size());
  for (const auto& w : words) d.push_back(w.deprel);
  return d;
}

namespace {
bool parse_int(const std::string& s, int& v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
}  // namespace

std::filesystem::path find_conllu_split(const std::filesystem::path& dir, const std::string& split) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    for (const std::string& suffix : {"-" + split + ".conllu", "-" + split + ".conllu.gz"})
      if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
        found.push_back(e.path());
  }
  return found.empty() ? std::filesystem::path() : *std::min_element(found.begin(), found.end());
}

std::string tree_problem(const std::vector<int>& heads, bool single_root) {
  const int n = static_cast<int>(heads.size());
  std::vector<int> roots;
  for (int i = 0; i < n; ++i)
    if (heads[(size_t)i] == 0) roots.push_back(i + 1);
  // Walk up from every word; state 1: on the current path, 2: known to reach the root.
  std::vector<char> state((size_t)n + 1, 0);
  state[0] = 2;
  for (int start = 1; start <= n; ++start) {
    std::vector<int> path;
    int w = start;
    while (state[(size_t)w] == 0) {
      state[(size_t)w] = 1;
      path.push_back(w);
      w = heads[(size_t)w - 1];
    }
    if (state[(size_t)w] == 1) {  // back on this path: a cycle through w
      if (heads[(size_t)w - 1] == w) return "word " + std::to_string(w) + " is its own head";
      std::string cyc = std::to_string(w);
      for (int v = heads[(size_t)w - 1]; v != w; v = heads[(size_t)v - 1]) cyc += " -> " + std::to_string(v);
      return "words " + cyc + " -> " + std::to_string(w) + " form a cycle (no path to the root)";
    }
    for (int v : path) state[(size_t)v] = 2;
  }
  if (roots.empty()) return "no word has HEAD 0 (no root)";
  if (single_root && roots.size() > 1) {
    std::string list;
    for (size_t i = 0; i < roots.size() && i < 5; ++i) list += (i ? ", " : "") + std::to_string(roots[i]);
    return std::to_string(roots.size()) + " words have HEAD 0 (words " + list + (roots.size() > 5 ? ", ..." : "") +
           "); a UD tree has exactly one root";
  }
  return "";
}

std::vector<ConlluSentence> read_conllu(const std::filesystem::path& path) {
  std::vector<ConlluSentence> out;
  LineReader r(path);
  std::string line;
  ConlluSentence cur;
  std::size_t sent_start_line = 0;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(path.string() + ":" + std::to_string(r.line_number()) + ": malformed CoNLL-U: " +
                             what + " (expected 10 tab-separated columns ID FORM LEMMA UPOS XPOS FEATS HEAD "
                             "DEPREL DEPS MISC; see universaldependencies.org/format.html)");
  };
  auto finish = [&]() {
    int n = static_cast<int>(cur.words.size());
    for (const auto& w : cur.words)
      if (w.head < 0 || w.head > n)
        throw std::runtime_error(path.string() + ":" + std::to_string(sent_start_line) + ": sentence \"" +
                                 cur.sent_id + "\" word " + std::to_string(w.id) + " has HEAD " +
                                 std::to_string(w.head) + " outside [0, " + std::to_string(n) + "]");
    if (const std::string why = tree_problem(cur.heads(), /*single_root=*/true); !why.empty())
      throw std::runtime_error(path.string() + ":" + std::to_string(sent_start_line) + ": sentence " +
                               (cur.sent_id.empty() ? "starting here" : "\"" + cur.sent_id + "\"") +
                               " is not a dependency tree: " + why + "; fix its HEAD column or remove the sentence");
    out.push_back(std::move(cur));
    cur = ConlluSentence{};
  };
  std::vector<std::string> cols;
  while (r.next(line)) {
    if (line.empty()) {
      if (!cur.words.empty()) finish();
      else if (cur.multiword_tokens || cur.empty_nodes) fail("sentence without words");
      cur = ConlluSentence{};
      sent_start_line = 0;
      continue;
    }
    if (line[0] == '#') {
      if (cur.words.empty()) sent_start_line = r.line_number();
      auto eq = line.find(" = ");
      if (line.rfind("# sent_id", 0) == 0 && eq != std::string::npos) cur.sent_id = line.substr(eq + 3);
      else if (line.rfind("# text", 0) == 0 && line.rfind("# text_", 0) != 0 && eq != std::string::npos)
        cur.text = line.substr(eq + 3);
      continue;
    }
    if (cur.words.empty() && cur.multiword_tokens == 0 && cur.empty_nodes == 0 && sent_start_line == 0)
      sent_start_line = r.line_number();
    cols.clear();
    std::size_t start = 0;
    while (true) {
      auto tab = line.find('\t', start);
      cols.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    if (cols.size() != 10) fail("found " + std::to_string(cols.size()) + " column(s)");
    const std::string& id = cols[0];
    if (id.find('-') != std::string::npos) { ++cur.multiword_tokens; continue; }
    if (id.find('.') != std::string::npos) { ++cur.empty_nodes; continue; }
    ConlluWord w;
    if (!parse_int(id, w.id)) fail("ID \"" + id + "\" is not an integer, a range n-m or an empty node n.k");
    if (w.id != static_cast<int>(cur.words.size()) + 1)
      fail("ID " + id + " out of order (expected " + std::to_string(cur.words.size() + 1) +
           "; is a blank line missing between sentences?)");
    if (!parse_int(cols[6], w.head)) fail("HEAD \"" + cols[6] + "\" is not an integer");
    w.form = std::move(cols[1]);
    w.lemma = std::move(cols[2]);
    w.upos = std::move(cols[3]);
    w.xpos = std::move(cols[4]);
    w.feats = std::move(cols[5]);
    w.deprel = std::move(cols[7]);
    cur.words.push_back(std::move(w));
  }
  if (!cur.words.empty()) finish();
  return out;
}

std::vector<ConlluSentence> parse_malt_tab(const std::string& text, const std::string& source) {
  std::vector<ConlluSentence> out;
  ConlluSentence cur;
  std::size_t line_no = 0, start_line = 0, pos = 0;
  auto finish = [&] {
    const int n = static_cast<int>(cur.words.size());
    for (const auto& w : cur.words)
      if (w.head < 0 || w.head > n)
        throw std::runtime_error(source + ":" + std::to_string(start_line + static_cast<std::size_t>(w.id) - 1) +
                                 ": HEAD " + std::to_string(w.head) + " outside [0, " + std::to_string(n) + "]");
    if (const std::string why = tree_problem(cur.heads(), /*single_root=*/false); !why.empty())
      throw std::runtime_error(source + ":" + std::to_string(start_line) + ": the sentence starting here is not a "
                               "dependency tree: " + why + "; fix its HEAD column or remove the sentence");
    out.push_back(std::move(cur));
    cur = ConlluSentence{};
  };
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) {
      if (!cur.words.empty()) finish();
      continue;
    }
    std::vector<std::string> cols;
    std::size_t a = 0;
    while (true) {
      auto tab = line.find('\t', a);
      cols.push_back(line.substr(a, tab == std::string::npos ? std::string::npos : tab - a));
      if (tab == std::string::npos) break;
      a = tab + 1;
    }
    if (cols.size() != 3 && cols.size() != 4)
      throw std::runtime_error(source + ":" + std::to_string(line_no) + ": malformed Malt-TAB line: " +
                               std::to_string(cols.size()) + " column(s), expected FORM<TAB>POS<TAB>HEAD[<TAB>DEPREL]");
    ConlluWord w;
    w.id = static_cast<int>(cur.words.size()) + 1;
    if (w.id == 1) start_line = line_no;
    if (!parse_int(cols[2], w.head))
      throw std::runtime_error(source + ":" + std::to_string(line_no) + ": HEAD \"" + cols[2] + "\" is not an integer");
    w.form = cols[0];
    w.xpos = cols[1];
    if (cols.size() == 4) w.deprel = cols[3];
    cur.words.push_back(std::move(w));
  }
  if (!cur.words.empty()) finish();
  return out;
}

}  // namespace nl::data
