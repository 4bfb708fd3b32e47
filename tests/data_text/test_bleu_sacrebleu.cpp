#include <catch2/catch.hpp>

#include <cmath>

#include "cli_util.h"
#include "data/metrics/bleu.h"
#include "data_text/temp_dir.h"

using namespace nl::metrics;

namespace {
BleuOptions opts(BleuTokenize tok, BleuSmooth smooth, bool lc = false) {
  BleuOptions o;
  o.tokenize = tok;
  o.smooth = smooth;
  o.lowercase = lc;
  return o;
}
constexpr auto k13a = BleuTokenize::k13a;
constexpr auto kNoTok = BleuTokenize::kNone;
constexpr auto kExp = BleuSmooth::kExp;
constexpr auto kNoSmooth = BleuSmooth::kNone;
}  // namespace

TEST_CASE("BLEU: tiny corpus by hand under 13a and none", "[data][bleu]") {
  const std::vector<std::string> hyps{"The cat sat on the mat.", "It costs 3.5 dollars, not 1,000!"};
  const std::vector<std::string> refs{"The cat sat on a mat.", "It costs 3.5 dollars, not 1,000."};
  // 13a: "The cat sat on the mat ." / "It costs 3.5 dollars , not 1,000 !" (15 tokens, as the references)
  //   p1 = 13/15, p2 = 10/13, p3 = 7/11, p4 = 5/9, BP = 1
  auto t = corpus_bleu(hyps, refs);  // the defaults: 13a, exp, cased
  CHECK(t.matches == std::array<int64_t, 4>{13, 10, 7, 5});
  CHECK(t.totals == std::array<int64_t, 4>{15, 13, 11, 9});
  CHECK(t.hyp_len == 15);
  CHECK(t.ref_len == 15);
  CHECK(t.score == Approx(100.0 * std::pow(4550.0 / 19305.0, 0.25)).epsilon(1e-12));
  // none: "mat." and "1,000!" are single tokens (12 tokens); p1 = 10/12, p2 = 7/10, p3 = 5/8, p4 = 3/6
  auto n = corpus_bleu(hyps, refs, opts(kNoTok, kNoSmooth));
  CHECK(n.totals == std::array<int64_t, 4>{12, 10, 8, 6});
  CHECK(n.score == Approx(100.0 * std::pow(1050.0 / 5760.0, 0.25)).epsilon(1e-12));
  // case-insensitive: both sides are lowercased before tokenizing
  CHECK(corpus_bleu({"THE CAT SAT ON A MAT."}, {"The cat sat on a mat."}, opts(k13a, kExp, true)).score == Approx(100.0));
  CHECK(corpus_bleu({"THE CAT SAT ON A MAT."}, {"The cat sat on a mat."}).score < 10.0);
}

TEST_CASE("BLEU: exp smoothing halves again for each further order without matches", "[data][bleu]") {
  // p1 = 4/5, p2 = 2/4, m3 = m4 = 0: exp gives p3 = 1/(2*3), p4 = 1/(4*2)
  auto e = corpus_bleu({"a b c d e"}, {"a b x d e"});
  CHECK(e.precisions[2] == Approx(100.0 / 6.0));
  CHECK(e.precisions[3] == Approx(100.0 / 8.0));
  CHECK(e.score == Approx(100.0 * std::pow(0.8 * 0.5 / 6.0 / 8.0, 0.25)).epsilon(1e-12));
  CHECK(corpus_bleu({"a b c d e"}, {"a b x d e"}, opts(k13a, kNoSmooth)).score == 0.0);
  // sacreBLEU test_bleu.py: "this is a fest" vs "this is a test": counts 3/2/1/0 of 4/3/2/1; exp: p4 = 1/2
  auto f = corpus_bleu({"this is a fest"}, {"this is a test"});
  CHECK(f.score == Approx(100.0 * std::pow(0.75 * (2.0 / 3.0) * 0.5 * 0.5, 0.25)).epsilon(1e-12));
  // no match at all: 0 with either smoothing (sacreBLEU's early stop); an order without n-grams: 0
  CHECK(corpus_bleu({"x y z w"}, {"a b c d"}).score == 0.0);
  CHECK(corpus_bleu({"a b c"}, {"a b c"}).score == 0.0);
}

TEST_CASE("BLEU: sacreBLEU's published test values", "[data][bleu]") {
  // test_bleu.py test_case_scoring: compute_bleu([9,7,5,3], [10,8,6,4], 11, 11) = 0.8375922397
  BleuStats s;
  s.matches = {9, 7, 5, 3};
  s.totals = {10, 8, 6, 4};
  s.hyp_len = s.ref_len = 11;
  CHECK(std::abs(bleu_from_stats(s, kNoSmooth).score - 83.75922397) < 1e-6);
  // test_bleu.py test_case_statistics
  auto st = corpus_bleu({"am I am a character sequence"}, {"I am a symbol string sequence a a"});
  CHECK(st.matches == std::array<int64_t, 4>{4, 2, 1, 0});
  CHECK(st.totals == std::array<int64_t, 4>{6, 5, 4, 3});
  // test_sentence_bleu.py (issue #98, Romanian with ţ vs ț); the 4 orders all have n-grams, so
  // effective_order=True there does not change the number
  const std::string ref = "producţia de zahăr brut se exprimă în zahăr alb;";
  const std::string sys = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;";
  CHECK(std::abs(corpus_bleu({sys}, {ref}, opts(k13a, kExp)).score - 8.493) < 1e-3);
  CHECK(corpus_bleu({sys}, {ref}, opts(k13a, kNoSmooth)).score == 0.0);
  CHECK(std::abs(corpus_bleu({sys}, {ref}, opts(kNoTok, kExp)).score - 7.347) < 1e-3);
  // test_bleu.py test_corpus_bleu_cases: the README example, two reference streams
  const std::vector<std::string> hyps{"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
  const std::vector<std::vector<std::string>> refs{
      {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
      {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."}};
  CHECK(std::abs(corpus_bleu_multi(hyps, refs).score - 48.530827) < 1e-6);
  CHECK(std::abs(corpus_bleu_multi(hyps, refs, opts(kNoTok, kExp)).score - 49.1919566) < 1e-6);
  CHECK(std::abs(corpus_bleu_multi(hyps, refs, opts(k13a, kNoSmooth)).score - 48.530827) < 1e-6);
  CHECK(corpus_bleu_multi({"", "", ""}, refs).score == 0.0);
}

TEST_CASE("BLEU: segments are lowercased before 13a and stripped on the right", "[data][bleu]") {
  // sacreBLEU lowercases first, so "&QUOT;" becomes the entity "&quot;" and then a quote
  CHECK(bleu_tokens("Say &QUOT;Hi&QUOT;", opts(k13a, kExp, true)) == std::vector<std::string>{"say", "\"", "hi", "\""});
  // rstrip before tokenizing: the trailing newline is gone, so "-\n" is not a line-end hyphen
  CHECK(bleu_tokens("foo-\n", opts(k13a, kExp)) == std::vector<std::string>{"foo-"});
  CHECK(bleu_tokens("a  b\u00A0c ", opts(kNoTok, kExp)) == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("BLEU: options / signature / reference-count errors", "[data][bleu][errors]") {
  CHECK(parse_bleu_tokenize("13a") == k13a);
  CHECK(parse_bleu_smooth("none") == kNoSmooth);
  CHECK_THROWS_WITH(parse_bleu_tokenize("intl"), Catch::Contains("'intl'") && Catch::Contains("13a"));
  CHECK_THROWS_WITH(parse_bleu_smooth("floor"), Catch::Contains("'floor'") && Catch::Contains("exp"));
  CHECK(bleu_signature({}, 1) == "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:normlab");
  CHECK(bleu_signature(opts(kNoTok, kNoSmooth, true), 2) == "nrefs:2|case:lc|eff:no|tok:none|smooth:none|version:normlab");
  CHECK_THROWS_WITH(corpus_bleu_multi({"a", "b"}, {{"a", "b"}, {"a"}}),
                    Catch::Contains("1 references in reference stream 2"));
  CHECK_THROWS_WITH(corpus_bleu_multi({"a"}, {}), Catch::Contains("no reference stream"));
}

TEST_CASE("normlab data bleu: --tokenize / --smooth / the signature", "[data][bleu][cli]") {
  nltest::TempDir t("bleu_cli");
  const auto hyp = t.write("hyp.txt", "The cat sat on the mat.\nIt costs 3.5 dollars, not 1,000!\n");
  const auto ref = t.write("ref.txt", "The cat sat on a mat.\nIt costs 3.5 dollars, not 1,000.\n");
  const std::string files = " --hyp '" + hyp.string() + "' --ref '" + ref.string() + "'";
  auto [rc, out] = nltest::run_cli("data bleu" + files);
  INFO(out);
  CHECK(rc == 0);
  char want[32];
  std::snprintf(want, sizeof want, "BLEU = %.2f,", 100.0 * std::pow(4550.0 / 19305.0, 0.25));
  CHECK(out.find(want) != std::string::npos);
  CHECK(out.find("signature: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:normlab") != std::string::npos);
  auto [rc2, out2] = nltest::run_cli("data bleu --tokenize none --smooth none --lc" + files + " '" + ref.string() + "'");
  INFO(out2);
  CHECK(rc2 == 0);
  CHECK(out2.find("signature: nrefs:2|case:lc|eff:no|tok:none|smooth:none|version:normlab") != std::string::npos);
  auto [rc3, out3] = nltest::run_cli("data bleu --tokenize intl" + files);
  CHECK(rc3 != 0);
  CHECK(out3.find("intl") != std::string::npos);
}
