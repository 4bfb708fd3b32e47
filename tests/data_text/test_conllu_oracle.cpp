#include <catch2/catch.hpp>

#include "data/metrics/attachment.h"
#include "data/text/arc_standard.h"
#include "data/text/conllu.h"
#include "data/text/zip_archive.h"
#include "data_text/temp_dir.h"
#include "test_paths.h"

using namespace nl::data;

TEST_CASE("ud-ewt: sentence, word and multiword-token counts equal SOURCE.md", "[data][real][conllu]") {
  auto d = nltest::data_path("ud-english-ewt");
  NL_SKIP_IF_MISSING(d);
  struct S { const char* file; std::size_t sents; int64_t words, mwt; };
  for (auto s : {S{"en_ewt-ud-train.conllu.gz", 12544, 204577, 2614}, S{"en_ewt-ud-dev.conllu", 2001, 25147, 359},
                 S{"en_ewt-ud-test.conllu", 2077, 25094, 354}}) {
    auto sents = read_conllu(d / s.file);
    CHECK(sents.size() == s.sents);
    int64_t words = 0, mwt = 0, roots_ok = 0;
    for (const auto& x : sents) {
      words += static_cast<int64_t>(x.words.size());
      mwt += x.multiword_tokens;
      auto h = x.heads();
      roots_ok += std::count(h.begin(), h.end(), 0) == 1;
    }
    CHECK(words == s.words);
    CHECK(mwt == s.mwt);
    CHECK(roots_ok == static_cast<int64_t>(sents.size()));
  }
}

TEST_CASE("arc-standard oracle reproduces every projective UD EWT training tree, gold UAS = LAS = 100",
          "[data][real][oracle]") {
  auto p = nltest::data_path("ud-english-ewt/en_ewt-ud-train.conllu.gz");
  NL_SKIP_IF_MISSING(p);
  auto sents = read_conllu(p);
  REQUIRE(sents.size() == 12544);
  std::size_t projective = 0, reproduced = 0, nonproj_rejected = 0;
  nl::metrics::AttachmentCounts gold;
  for (const auto& s : sents) {
    auto heads = s.heads();
    auto labels = s.deprels();
    std::vector<std::string> upos, xpos;
    for (const auto& w : s.words) { upos.push_back(w.upos); xpos.push_back(w.xpos); }
    gold += nl::metrics::attachment_counts(heads, labels, heads, labels, upos, xpos);
    if (!is_projective(heads)) {
      try { arc_standard_oracle(heads, labels); } catch (const std::invalid_argument&) { ++nonproj_rejected; }
      continue;
    }
    ++projective;
    auto ts = arc_standard_oracle(heads, labels);
    REQUIRE(ts.size() == 2 * heads.size());
    auto tree = apply_transitions(static_cast<int>(heads.size()), ts);
    reproduced += tree.heads == heads && tree.labels == labels;
  }
  CHECK(reproduced == projective);
  CHECK(nonproj_rejected == sents.size() - projective);
  CHECK(projective > sents.size() * 9 / 10);  // EWT is mostly projective
  CHECK(projective < sents.size());           // ... but not entirely, so the check above has teeth
  CHECK(gold.uas() == 100.0);
  CHECK(gold.las() == 100.0);
  WARN("UD EWT train: " << projective << " of " << sents.size() << " trees projective");
}

TEST_CASE("arc-standard: hand example, projectivity, illegal transitions", "[data][oracle]") {
  // "He saw her" : saw is root; He <- saw -> her
  std::vector<int> heads{2, 0, 2};
  std::vector<std::string> labels{"nsubj", "root", "obj"};
  auto ts = arc_standard_oracle(heads, labels);
  std::vector<Transition> expect{{Move::Shift, ""}, {Move::Shift, ""}, {Move::LeftArc, "nsubj"},
                                 {Move::Shift, ""}, {Move::RightArc, "obj"}, {Move::RightArc, "root"}};
  CHECK(ts == expect);
  CHECK(is_projective({2, 0, 2}));
  CHECK_FALSE(is_projective({3, 4, 0, 3}));  // arcs 1<-3 and 2<-4 cross
  CHECK_THROWS_AS(arc_standard_oracle({3, 4, 0, 3}, {"a", "b", "c", "d"}), std::invalid_argument);
  CHECK_THROWS_AS(apply_transitions(1, {{Move::Shift, ""}, {Move::Shift, ""}}), std::invalid_argument);
  CHECK_THROWS_AS(apply_transitions(2, {{Move::Shift, ""}}), std::invalid_argument);
}

TEST_CASE("conllu: multiword tokens and empty nodes skipped, malformed lines name file and line",
          "[data][conllu][errors]") {
  nltest::TempDir t("conllu");
  std::string good =
      "# sent_id = s1\n# text = I can't\n1\tI\tI\tPRON\tPRP\t_\t3\tnsubj\t_\t_\n2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_\n"
      "2\tca\tcan\tAUX\tMD\t_\t3\taux\t_\t_\n3\tn't\tnot\tPART\tRB\t_\t0\troot\t_\t_\n3.1\tx\tx\tX\tX\t_\t_\t_\t_\t_\n";
  auto sents = read_conllu(t.write("ok.conllu", good));  // no final blank line: accepted
  REQUIRE(sents.size() == 1);
  CHECK(sents[0].words.size() == 3);
  CHECK(sents[0].multiword_tokens == 1);
  CHECK(sents[0].empty_nodes == 1);
  CHECK(sents[0].sent_id == "s1");
  CHECK(sents[0].heads() == std::vector<int>{3, 3, 0});
  auto bad = t.write("bad.conllu", "# c\n1\tI\tI\tPRON\tPRP\t_\t0\troot\t_\t_\n\n1\tx\tx\tX\n");
  CHECK_THROWS_WITH(read_conllu(bad), Catch::Contains("bad.conllu:4") && Catch::Contains("4 column"));
  auto badhead = t.write("head.conllu", "1\tI\tI\tPRON\tPRP\t_\tzero\troot\t_\t_\n");
  CHECK_THROWS_WITH(read_conllu(badhead), Catch::Contains("head.conllu:1") && Catch::Contains("HEAD"));
  auto order = t.write("order.conllu", "1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n3\tb\tb\tX\tX\t_\t1\tdep\t_\t_\n");
  CHECK_THROWS_WITH(read_conllu(order), Catch::Contains("order.conllu:2"));
  auto range = t.write("range.conllu", "1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n2\tb\tb\tX\tX\t_\t7\tdep\t_\t_\n");
  CHECK_THROWS_WITH(read_conllu(range), Catch::Contains("outside [0, 2]"));
}

TEST_CASE("ptb-dep-nltk: zip + Malt-TAB give 3914 sentences / 94084 tokens, one root each, oracle round trip",
          "[data][real][oracle]") {
  auto p = nltest::data_path("ptb-dep-nltk/dependency_treebank.zip");
  NL_SKIP_IF_MISSING(p);
  auto members = read_zip(p);
  std::size_t files = 0, sents = 0, tokens = 0, single_root = 0, reproduced = 0, projective = 0;
  for (const auto& m : members) {
    if (m.name.size() < 3 || m.name.substr(m.name.size() - 3) != ".dp") continue;
    ++files;
    for (const auto& s : parse_malt_tab(m.data, m.name)) {
      ++sents;
      tokens += s.words.size();
      auto h = s.heads();
      single_root += std::count(h.begin(), h.end(), 0) == 1;
      if (!is_projective(h)) continue;
      ++projective;
      std::vector<std::string> labels(h.size(), "dep");
      auto t = apply_transitions(static_cast<int>(h.size()), arc_standard_oracle(h, labels));
      reproduced += t.heads == h;
    }
  }
  CHECK(files == 199);
  CHECK(sents == 3914);
  CHECK(tokens == 94084);
  CHECK(single_root == sents);
  CHECK(reproduced == projective);
}

TEST_CASE("zip and Malt-TAB errors name the file (and line)", "[data][conllu][errors]") {
  nltest::TempDir t("zip");
  CHECK_THROWS_WITH(read_zip(t.write("x.zip", std::string(100, 'x'))), Catch::Contains("x.zip") && Catch::Contains("not a zip"));
  CHECK_THROWS_WITH(read_zip(t.path / "missing.zip"), Catch::Contains("not found"));
  CHECK_THROWS_WITH(parse_malt_tab("a\tDT\t2\nb\tNN\n", "f.dp"), Catch::Contains("f.dp:2"));
  CHECK_THROWS_WITH(parse_malt_tab("a\tDT\t2\nb\tNN\t5\n", "f.dp"), Catch::Contains("outside [0, 2]"));
  auto s = parse_malt_tab("Pierre\tNNP\t2\nVinken\tNNP\t0\n\nIt\tPRP\t0", "f.dp");  // no final newline
  REQUIRE(s.size() == 2);
  CHECK(s[0].words[1].xpos == "NNP");
  CHECK(s[1].heads() == std::vector<int>{0});
}
