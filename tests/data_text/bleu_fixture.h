#pragma once
// The BLEU fixture's hypotheses: a deterministic corruption of reference lines, the C++ twin of
// corrupt() in tests/fixtures/bleu/make_fixture.py (which documents the specification; keep both in
// step, the test compares a hash of the output with the one the script wrote into expected.json).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "data/text/utf8.h"

namespace nltest::bleu_fixture {

/// SplitMix64 (Steele, Lea & Flood 2014); unsigned arithmetic is mod 2^64.
struct SplitMix64 {
  uint64_t s;
  explicit SplitMix64(uint64_t seed) : s(seed) {}
  uint64_t next() {
    s += 0x9E3779B97F4A7C15ULL;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

/// `t` with the case of its first ASCII letter flipped (unchanged if it has none).
inline std::string flip_first_ascii_letter(std::string t) {
  for (char& c : t) {
    if (c >= 'a' && c <= 'z') { c = static_cast<char>(c - 'a' + 'A'); break; }
    if (c >= 'A' && c <= 'Z') { c = static_cast<char>(c - 'A' + 'a'); break; }
  }
  return t;
}

inline std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string r;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) r += sep;
    r += v[i];
  }
  return r;
}

/// Hypotheses for `refs` (one per line), as make_fixture.py's corrupt(refs, seed).
inline std::vector<std::string> corrupt(const std::vector<std::string>& refs, uint64_t seed = 20241122) {
  SplitMix64 rng(seed);
  const uint64_t n = refs.size();
  std::vector<std::vector<std::string>> toks;
  for (const auto& r : refs) toks.push_back(nl::data::split_whitespace(r));
  std::vector<std::string> hyps;
  for (uint64_t i = 0; i < n; ++i) {
    const auto& w = toks[i];
    std::vector<std::string> out;
    for (const auto& t : w) {
      const uint64_t u = rng.next() % 100;
      if (u < 8) continue;  // drop
      if (u < 16) {         // replace by a token of another line
        uint64_t k = rng.next() % n;
        if (k == i) k = (i + 1) % n;
        out.push_back(toks[k][rng.next() % toks[k].size()]);
      } else if (u < 22) {
        out.push_back(flip_first_ascii_letter(t));
      } else {
        out.push_back(t);
      }
    }
    if (out.size() >= 2 && rng.next() % 100 < 15) {  // swap two adjacent tokens
      const uint64_t j = rng.next() % (out.size() - 1);
      std::swap(out[j], out[j + 1]);
    }
    if (out.size() > 6 && rng.next() % 100 < 20)  // truncation (brevity penalty)
      out.resize(std::max<std::size_t>(4, out.size() * 2 / 3));
    if (out.size() < 4) out.assign(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(4, w.size())));
    hyps.push_back(join(out, " "));
  }
  return hyps;
}

/// 64-bit FNV-1a of the bytes of `s`, as 16 lowercase hex digits.
inline std::string fnv1a64_hex(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char b : s) {
    h ^= b;
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace nltest::bleu_fixture
