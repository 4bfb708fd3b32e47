#include "data/text/utf8.h"

#include <cstdio>
#include <stdexcept>

namespace nl::data {

std::size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) { ++i; continue; }
    std::size_t len;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else return i;  // continuation byte, overlong 2-byte lead (C0/C1) or lead > F4
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      unsigned cc = p[i + k];
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return i;
    if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

void check_utf8(std::string_view s, const std::string& file, std::size_t line) {
  std::size_t pos = find_invalid_utf8(s);
  if (pos == std::string_view::npos) return;
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(s[pos])));
  throw std::runtime_error(file + ":" + std::to_string(line) + ": invalid UTF-8 byte " + byte +
                           " at column " + std::to_string(pos + 1) +
                           "; convert the file to UTF-8 (for Latin-1 text: iconv -f latin1 -t utf-8 FILE > "
                           "FILE.utf8)");
}

bool strip_utf8_bom(std::string& s) {
  if (s.size() >= 3 && static_cast<unsigned char>(s[0]) == 0xEF && static_cast<unsigned char>(s[1]) == 0xBB &&
      static_cast<unsigned char>(s[2]) == 0xBF) {
    s.erase(0, 3);
    return true;
  }
  return false;
}

std::string latin1_to_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char ch : s) {
    unsigned c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      out.push_back(ch);
    } else {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

// Byte length of the whitespace character at s[i], or 0. The set is Python's str.isspace() (what
// str.split(), fairseq's tokenize_line and sacreBLEU split on): ASCII \t \n \v \f \r, U+001C..U+001F,
// space, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
static std::size_t space_len(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  unsigned c = b(0);
  if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) return 1;
  if (c == 0xC2 && (b(1) == 0x85 || b(1) == 0xA0)) return 2;
  if (c == 0xE1 && b(1) == 0x9A && b(2) == 0x80) return 3;  // U+1680
  if (c == 0xE2 && b(1) == 0x80 && ((b(2) >= 0x80 && b(2) <= 0x8A) || b(2) == 0xA8 || b(2) == 0xA9 || b(2) == 0xAF))
    return 3;                                                 // U+2000..200A, U+2028, U+2029, U+202F
  if (c == 0xE2 && b(1) == 0x81 && b(2) == 0x9F) return 3;  // U+205F
  if (c == 0xE3 && b(1) == 0x80 && b(2) == 0x80) return 3;  // U+3000
  return 0;
}

std::vector<std::string> split_whitespace(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0, n = s.size();
  while (i < n) {
    while (i < n) {
      std::size_t k = space_len(s, i);
      if (!k) break;
      i += k;
    }
    std::size_t j = i;
    while (j < n && !space_len(s, j)) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string normalize_whitespace(std::string_view s) {
  std::string out;
  for (const auto& w : split_whitespace(s)) {
    if (!out.empty()) out.push_back(' ');
    out += w;
  }
  return out;
}

std::string_view rstrip_whitespace(std::string_view s) {
  // Forward scan (whitespace is only recognised at a character's first byte): `end` is one past the last
  // byte that is not part of a whitespace character.
  std::size_t end = 0;
  for (std::size_t i = 0; i < s.size();) {
    if (std::size_t k = space_len(s, i)) {
      i += k;
    } else {
      end = ++i;
    }
  }
  return s.substr(0, end);
}

static std::size_t cp_len(unsigned char c) {
  if (c < 0x80) return 1;
  if (c >= 0xF0) return 4;
  if (c >= 0xE0) return 3;
  return 2;
}

std::vector<std::string> utf8_code_points(std::string_view s) {
  if (auto pos = find_invalid_utf8(s); pos != std::string_view::npos)
    throw std::runtime_error("utf8_code_points: invalid UTF-8 at byte " + std::to_string(pos));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = cp_len(static_cast<unsigned char>(s[i]));
    out.emplace_back(s.substr(i, len));
    i += len;
  }
  return out;
}

static char32_t lower_cp(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c < 0xC0) return c;
  if (c <= 0xDE) return c == 0xD7 ? c : c + 0x20;                        // Latin-1
  if (c == 0x130 || c == 0x131) return c;                              // dotted/dotless I: leave
  if (c >= 0x100 && c <= 0x137) return c | 1;                           // Latin Ext-A pairs
  if (c >= 0x139 && c <= 0x148) return (c & 1) ? c + 1 : c;
  if (c >= 0x14A && c <= 0x177) return c | 1;
  if (c == 0x178) return 0xFF;
  if (c >= 0x179 && c <= 0x17E) return (c & 1) ? c + 1 : c;
  if (c >= 0x1E00 && c <= 0x1E95) return c | 1;                         // Latin Ext Additional
  if (c >= 0x1EA0 && c <= 0x1EFF) return c | 1;                         // (Vietnamese)
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 0x20;          // Greek
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;                        // Cyrillic
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  return c;
}

static void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string utf8_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t i = 0, n = s.size();
  while (i < n) {
    std::size_t len = cp_len(p[i]);
    if (len == 1 || i + len > n) {
      char c = static_cast<char>(p[i]);
      out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c);
      ++i;
      continue;
    }
    char32_t cp = p[i] & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[i + k] & 0x3F);
    append_utf8(out, lower_cp(cp));
    i += len;
  }
  return out;
}

}  // namespace nl::data
