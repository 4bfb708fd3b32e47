#include "data/metrics/tokenizer_13a.h"

#include "data/text/utf8.h"

namespace nl::metrics {

namespace {

// Python's str.replace: every non-overlapping occurrence of `from`, scanned left to right.
void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  std::size_t pos = 0;
  for (std::size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out.append(to);
  }
  if (pos == 0) return;  // nothing found
  out.append(s, pos, std::string::npos);
  s = std::move(out);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// The character class of the first rule: ranges {-~, [-`, space-&, (-+, :-@ and '/'.
bool is_padded_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

// re.sub for a two-character pattern (a)(b): scans left to right; where s[i] matches `a` and s[i+1] matches
// `b`, writes emit(s[i], s[i+1]) and resumes after both, else copies s[i]. Byte-wise equals code-point-wise
// here because both predicates only accept ASCII or reject ASCII digits (see the header).
template <class A, class B, class Emit>
std::string substitute_pairs(const std::string& s, A a, B b, Emit emit) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  std::size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && a(s[i]) && b(s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      i += 2;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

}  // namespace

std::string tokenize_13a(std::string_view line) {
  std::string s(line);
  // language-independent part
  replace_all(s, "<skipped>", "");
  replace_all(s, "-\n", "");
  replace_all(s, "\n", " ");
  if (s.find('&') != std::string::npos) {
    replace_all(s, "&quot;", "\"");
    replace_all(s, "&amp;", "&");
    replace_all(s, "&lt;", "<");
    replace_all(s, "&gt;", ">");
  }
  // language-dependent part (Western languages), on " line "
  std::string padded;
  padded.reserve(s.size() * 2 + 2);
  padded.push_back(' ');
  for (char c : s) {
    if (is_padded_symbol(c)) {
      padded.push_back(' ');
      padded.push_back(c);
      padded.push_back(' ');
    } else {
      padded.push_back(c);
    }
  }
  padded.push_back(' ');
  auto not_digit = [](char c) { return !is_digit(c); };
  padded = substitute_pairs(padded, not_digit, is_period_or_comma, [](std::string& o, char x, char p) {
    o.push_back(x);
    o.push_back(' ');
    o.push_back(p);
    o.push_back(' ');
  });
  padded = substitute_pairs(padded, is_period_or_comma, not_digit, [](std::string& o, char p, char x) {
    o.push_back(' ');
    o.push_back(p);
    o.push_back(' ');
    o.push_back(x);
  });
  padded = substitute_pairs(padded, is_digit, [](char c) { return c == '-'; }, [](std::string& o, char d, char) {
    o.push_back(d);
    o.append(" - ");
  });
  return nl::data::normalize_whitespace(padded);
}

}  // namespace nl::metrics
