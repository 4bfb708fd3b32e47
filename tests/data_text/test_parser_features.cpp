// The 48 Chen & Manning features of hand-built arc-standard configurations, checked position by
// position; legality of transitions; the configuration's tree equals apply_transitions'.
#include <catch2/catch.hpp>

#include <vector>

#include "data/text/arc_standard.h"
#include "data/text/parser_features.h"

using namespace nl::data;

namespace {
// "The(1) cat(2) sat(3) on(4) the(5) mat(6) now(7)": word id 10 + p, tag id 20 + p, ROOT = kParseRoot.
struct Sentence {
  std::vector<int32_t> words{kParseRoot, 11, 12, 13, 14, 15, 16, 17};
  std::vector<int32_t> tags{kParseRoot, 21, 22, 23, 24, 25, 26, 27};
  std::vector<int32_t> features(const ArcStandardState& c) const {
    std::vector<int32_t> f(kParseFeatures, -99);
    parser_features(c, words.data(), tags.data(), f.data());
    return f;
  }
};
constexpr int32_t det = 5, nsubj = 6, kase = 7, obl = 8, root = 9, advmod = 10;
}  // namespace

TEST_CASE("parser features: 18 words, 18 tags, 12 labels of hand-built configurations", "[data][parser]") {
  Sentence s;
  ArcStandardState c(7);
  // Initial configuration: stack [ROOT], buffer [1..7].
  std::vector<int32_t> f = s.features(c);
  std::vector<int32_t> w0(18, kParseNull), t0(18, kParseNull);
  w0[0] = kParseRoot, w0[3] = 11, w0[4] = 12, w0[5] = 13;
  t0[0] = kParseRoot, t0[3] = 21, t0[4] = 22, t0[5] = 23;
  CHECK(std::vector<int32_t>(f.begin(), f.begin() + 18) == w0);
  CHECK(std::vector<int32_t>(f.begin() + 18, f.begin() + 36) == t0);
  CHECK(std::vector<int32_t>(f.begin() + 36, f.end()) == std::vector<int32_t>(12, kParseNull));

  c.apply(Move::Shift, 0);
  c.apply(Move::Shift, 0);
  c.apply(Move::LeftArc, det);  // cat -> The
  c.apply(Move::Shift, 0);
  c.apply(Move::LeftArc, nsubj);  // sat -> cat
  c.apply(Move::Shift, 0);
  // stack [ROOT sat on], buffer [the mat now]
  f = s.features(c);
  //                               s1  s2  s3          b1  b2  b3  lc1 rc1 lc2 rc2 llc rrc (s1=on: none)
  std::vector<int32_t> words_mid{14, 13, kParseRoot, 15, 16, 17, 0, 0, 0, 0, 0, 0,
                                 //  s2 = sat: lc1 = cat, llc = lc1(cat) = The
                                 12, 0, 0, 0, 11, 0};
  CHECK(std::vector<int32_t>(f.begin(), f.begin() + 18) == words_mid);
  CHECK(f[18 + 0] == 24);
  CHECK(f[18 + 12] == 22);
  CHECK(f[18 + 16] == 21);
  CHECK(std::vector<int32_t>(f.begin() + 36, f.end()) ==
        std::vector<int32_t>{0, 0, 0, 0, 0, 0, nsubj, 0, 0, 0, det, 0});

  c.apply(Move::Shift, 0);
  c.apply(Move::Shift, 0);
  c.apply(Move::LeftArc, det);   // mat -> the
  c.apply(Move::LeftArc, kase);  // mat -> on
  // stack [ROOT sat mat], buffer [now]: mat's left children on(4), the(5)
  f = s.features(c);
  std::vector<int32_t> words_late{16, 13, kParseRoot, 17, 0, 0, 14, 0, 15, 0, 0, 0, 12, 0, 0, 0, 11, 0};
  CHECK(std::vector<int32_t>(f.begin(), f.begin() + 18) == words_late);
  CHECK(std::vector<int32_t>(f.begin() + 36, f.end()) ==
        std::vector<int32_t>{kase, 0, det, 0, 0, 0, nsubj, 0, 0, 0, det, 0});

  c.apply(Move::RightArc, obl);  // sat -> mat
  c.apply(Move::Shift, 0);
  c.apply(Move::RightArc, advmod);  // sat -> now
  // stack [ROOT sat], buffer []: sat has right children mat(6), now(7): rc1 = now, rc2 = mat
  f = s.features(c);
  std::vector<int32_t> words_end{13, kParseRoot, 0, 0, 0, 0, 12, 17, 0, 16, 11, 0, 0, 0, 0, 0, 0, 0};
  CHECK(std::vector<int32_t>(f.begin(), f.begin() + 18) == words_end);
  CHECK(std::vector<int32_t>(f.begin() + 18, f.begin() + 36) ==
        std::vector<int32_t>{23, kParseRoot, 0, 0, 0, 0, 22, 27, 0, 26, 21, 0, 0, 0, 0, 0, 0, 0});
  CHECK(std::vector<int32_t>(f.begin() + 36, f.end()) ==
        std::vector<int32_t>{nsubj, advmod, 0, obl, det, 0, 0, 0, 0, 0, 0, 0});

  c.apply(Move::RightArc, root);
  CHECK(c.terminal());
  CHECK(c.head(3) == 0);
  CHECK(c.label(3) == root);
  // The same transitions through apply_transitions give the same tree.
  std::vector<Transition> ts{{Move::Shift, ""},     {Move::Shift, ""},    {Move::LeftArc, "det"}, {Move::Shift, ""},
                             {Move::LeftArc, "nsubj"}, {Move::Shift, ""}, {Move::Shift, ""},      {Move::Shift, ""},
                             {Move::LeftArc, "det"}, {Move::LeftArc, "case"}, {Move::RightArc, "obl"},
                             {Move::Shift, ""},     {Move::RightArc, "advmod"}, {Move::RightArc, "root"}};
  ParsedTree t = apply_transitions(7, ts);
  for (int w = 1; w <= 7; ++w) CHECK(c.head(w) == t.heads[(size_t)(w - 1)]);
}

TEST_CASE("parser configuration: legal transitions and errors", "[data][parser][errors]") {
  ArcStandardState c(2);
  CHECK(c.can_apply(Move::Shift));
  CHECK_FALSE(c.can_apply(Move::LeftArc));
  CHECK_FALSE(c.can_apply(Move::RightArc));
  CHECK_THROWS_WITH(c.apply(Move::LeftArc, 1), Catch::Contains("illegal LEFT-ARC"));
  c.apply(Move::Shift, 0);
  // ROOT may take a dependent only once the buffer is empty (single root word).
  CHECK_FALSE(c.can_apply(Move::LeftArc));
  CHECK_FALSE(c.can_apply(Move::RightArc));
  CHECK_THROWS_WITH(c.apply(Move::RightArc, 1), Catch::Contains("empty buffer"));
  c.apply(Move::Shift, 0);
  CHECK_FALSE(c.can_apply(Move::Shift));
  CHECK_THROWS_WITH(c.apply(Move::Shift, 0), Catch::Contains("illegal SHIFT"));
  CHECK(c.can_apply(Move::LeftArc));
  CHECK(c.can_apply(Move::RightArc));
  CHECK_THROWS_AS(ArcStandardState(-1), std::invalid_argument);
  CHECK(ArcStandardState(0).terminal());
}
