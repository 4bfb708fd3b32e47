#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/metrics/attachment.h"
#include "data/metrics/bleu.h"
#include "data/metrics/scores.h"
#include "data/text/line_reader.h"
#include "data/text/utf8.h"
#include "data_text/bleu_fixture.h"
#include "data_text/temp_dir.h"
#include "test_paths.h"

using namespace nl::metrics;

namespace {
std::filesystem::path fixture(const std::string& f) {
  // CMake compiles with absolute paths, so __FILE__ locates tests/ without a configure-time define.
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures" / "bleu" / f;
}
}  // namespace

TEST_CASE("BLEU: hand-computed example (Papineni et al. 2002 formula)", "[data][bleu]") {
  // p1 = 5/6, p2 = 3/5, p3 = 2/4, p4 = 1/3, BP = 1  ->  BLEU = 100 * (1/12)^(1/4)
  auto b = corpus_bleu({"the cat sat on the mat"}, {"the cat sat on a mat"});
  CHECK(b.score == Approx(100.0 * std::pow(1.0 / 12.0, 0.25)).epsilon(1e-12));
  CHECK(b.precisions[0] == Approx(500.0 / 6.0));
  CHECK(b.brevity_penalty == 1.0);
  // shorter hypothesis: BP = exp(1 - 6/5)
  auto s = corpus_bleu({"the cat sat on mat"}, {"the cat sat on the mat"});
  CHECK(s.brevity_penalty == Approx(std::exp(1.0 - 6.0 / 5.0)));
}

TEST_CASE("BLEU: perfect hypothesis = 100, empty hypothesis = 0, mismatched counts throw", "[data][bleu][errors]") {
  std::vector<std::string> refs{"a man rides a red bike down the hill .", "two dogs play in the snow together ."};
  CHECK(corpus_bleu(refs, refs).score == Approx(100.0));
  CHECK(corpus_bleu({"", ""}, refs).score == 0.0);
  BleuOptions lc;
  lc.lowercase = true;
  CHECK(corpus_bleu({"A MAN rides a red bike down the hill .", "two dogs play in the snow together ."}, refs, lc).score ==
        Approx(100.0));
  CHECK_THROWS_WITH(corpus_bleu({"x"}, refs), Catch::Contains("1 hypotheses but 2 references"));
  nltest::TempDir t("bleu");
  auto h = t.write("hyp.txt", "a\nb\nc\n");
  auto r = t.write("ref.txt", "a\nb\n");
  CHECK_THROWS_WITH(corpus_bleu_files(h, r), Catch::Contains("hyp.txt has 3 lines") && Catch::Contains("ref.txt has 2"));
}

TEST_CASE("BLEU: fixture matches nltk corpus_bleu (tokenize none) cased and case-insensitive", "[data][bleu]") {
  // References: first 100 lines of the shared Multi30k test set, read at run time (never copied into the
  // repo); hypotheses: the deterministic corruption of tests/fixtures/bleu/make_fixture.py (bleu_fixture.h).
  nlohmann::json exp;
  std::ifstream(fixture("expected.json")) >> exp;
  const auto src = nltest::data_path(exp.at("source").get<std::string>());
  NL_SKIP_IF_MISSING(src);
  const auto n = exp.at("num_lines").get<std::size_t>();
  std::vector<std::string> refs;
  {
    nl::data::LineReader r(src);
    std::string line;
    while (refs.size() < n && r.next(line)) refs.push_back(line);
  }
  REQUIRE(refs.size() == n);
  namespace bf = nltest::bleu_fixture;
  INFO("references: " << src.string());
  REQUIRE(bf::fnv1a64_hex(bf::join(refs, "\n")) == exp.at("refs_fnv1a64").get<std::string>());
  const auto hyps = bf::corrupt(refs, exp.at("seed").get<uint64_t>());
  // the C++ corruption reproduces make_fixture.py's hypotheses exactly
  REQUIRE(bf::fnv1a64_hex(bf::join(hyps, "\n")) == exp.at("hyps_fnv1a64").get<std::string>());
  for (const auto& h : hyps) CHECK(nl::data::split_whitespace(h).size() >= 4);
  for (auto [key, lc] : {std::pair{"cased", false}, {"lowercased", true}}) {
    INFO(key);
    BleuOptions o;  // nltk splits on whitespace and has no smoothing by default
    o.tokenize = BleuTokenize::kNone;
    o.smooth = BleuSmooth::kNone;
    o.lowercase = lc;
    auto b = corpus_bleu(hyps, refs, o);
    const auto& e = exp.at(key);
    CHECK(b.score == Approx(e.at("bleu").get<double>()).epsilon(1e-9));
    for (int k = 0; k < 4; ++k) CHECK(b.precisions[k] == Approx(e.at("precisions")[k].get<double>()).epsilon(1e-9));
    CHECK(b.brevity_penalty == Approx(e.at("bp").get<double>()).epsilon(1e-9));
    CHECK(b.hyp_len == e.at("hyp_len").get<int64_t>());
    CHECK(b.ref_len == e.at("ref_len").get<int64_t>());
  }
}

TEST_CASE("accuracy, perplexity and bits per character", "[data][metrics]") {
  CHECK(accuracy({1, 0, 2, 2}, {1, 1, 2, 0}) == 50.0);
  CHECK_THROWS_AS(accuracy({1}, {1, 2}), std::invalid_argument);
  // uniform over 10000 words: NLL = ln(10000) per token -> PPL 10000
  CHECK(perplexity(100 * std::log(10000.0), 100) == Approx(10000.0));
  // uniform over 256 bytes: 8 bits per character
  CHECK(bits_per_character(50 * std::log(256.0), 50) == Approx(8.0));
  CHECK_THROWS_AS(perplexity(1.0, 0), std::invalid_argument);
}

TEST_CASE("UAS/LAS exclude gold punctuation (Chen & Manning 2014 rule)", "[data][metrics][uas]") {
  std::vector<int> gh{2, 0, 2, 2};
  std::vector<std::string> gl{"nsubj", "root", "obj", "punct"};
  std::vector<int> ph{2, 0, 1, 1};  // obj head wrong, punct head wrong (ignored)
  std::vector<std::string> pl{"nsubj", "root", "obj", "punct"};
  std::vector<std::string> upos{"PRON", "VERB", "PRON", "PUNCT"}, xpos{"PRP", "VBD", "PRP", "."};
  auto c = attachment_counts(gh, gl, ph, pl, upos, xpos);
  CHECK(c.scored == 3);
  CHECK(c.uas() == Approx(200.0 / 3.0));
  pl[0] = "obj";
  CHECK(attachment_counts(gh, gl, ph, pl, upos, xpos).las() == Approx(100.0 / 3.0));
  CHECK(is_punctuation("SYM", "``"));
  CHECK_FALSE(is_punctuation("SYM", "-LRB-"));
}
