// Readers on the real data sets: counts must equal those verified in each folder's SOURCE.md.
#include <catch2/catch.hpp>

#include <set>

#include "data/text/classification.h"
#include "data/text/dictionary.h"
#include "data/text/lm_corpus.h"
#include "data/text/line_reader.h"
#include "data/text/parallel_text.h"
#include "data/text/utf8.h"
#include "data_text/temp_dir.h"
#include "test_paths.h"

using namespace nl::data;

namespace {
int64_t count_words(const std::vector<std::string>& lines) {
  int64_t n = 0;
  for (const auto& l : lines) n += static_cast<int64_t>(split_whitespace(l).size());
  return n;
}
}  // namespace

TEST_CASE("multi30k: raw (gz) and tok splits have SOURCE.md's pair and word counts", "[data][real][mt]") {
  auto d = nltest::data_path("multi30k");
  NL_SKIP_IF_MISSING(d);
  struct S { const char* stem; std::size_t n; int64_t en_raw, de_raw, en_tok, de_tok; };
  for (auto s : {S{"train", 29000, 345020, 322383, 377534, 360706}, S{"val", 1014, 12167, 11568, 13308, 12828},
                 S{"test_2016_flickr", 1000, 11877, 10905, 12968, 12103}}) {
    auto raw = read_parallel(d / "raw" / (std::string(s.stem) + ".en.gz"), d / "raw" / (std::string(s.stem) + ".de.gz"));
    auto tok = read_parallel(d / "tok" / (std::string(s.stem) + ".lc.norm.tok.en"),
                             d / "tok" / (std::string(s.stem) + ".lc.norm.tok.de"));
    CHECK(raw.size() == s.n);
    CHECK(tok.size() == s.n);
    CHECK(count_words(raw.source) == s.en_raw);
    CHECK(count_words(raw.target) == s.de_raw);
    CHECK(count_words(tok.source) == s.en_tok);
    CHECK(count_words(tok.target) == s.de_tok);
  }
}

TEST_CASE("iwslt14: BPE files align, and removing @@ reproduces the tok files", "[data][real][mt]") {
  auto d = nltest::data_path("iwslt14-de-en");
  NL_SKIP_IF_MISSING(d);
  for (auto [split, n] : {std::pair{"valid", 7283}, {"test", 6750}}) {
    auto bpe = read_parallel(d / "bpe" / (std::string(split) + ".de"), d / "bpe" / (std::string(split) + ".en"));
    auto tok = read_parallel(d / "tok" / (std::string(split) + ".de"), d / "tok" / (std::string(split) + ".en"));
    REQUIRE(bpe.size() == static_cast<std::size_t>(n));
    REQUIRE(tok.size() == static_cast<std::size_t>(n));
    std::size_t same = 0;
    for (std::size_t i = 0; i < bpe.size(); ++i)
      same += remove_bpe(bpe.source[i]) == tok.source[i] && remove_bpe(bpe.target[i]) == tok.target[i];
    CHECK(same == bpe.size());
  }
  auto v = read_parallel(d / "bpe" / "valid.de", d / "bpe" / "valid.en");
  CHECK(count_words(v.source) == 175309);
  CHECK(count_words(v.target) == 171339);
}

TEST_CASE("iwslt15: tst2013's BOM and missing final newline are handled", "[data][real][mt]") {
  auto d = nltest::data_path("iwslt15-en-vi");
  NL_SKIP_IF_MISSING(d);
  CHECK(read_parallel(d / "tst2012.en", d / "tst2012.vi").size() == 1553);
  auto c = read_parallel(d / "tst2013.en", d / "tst2013.vi");
  REQUIRE(c.size() == 1268);  // wc -l says 1267: the last line has no '\n'
  CHECK(c.source[0].rfind("When I was little", 0) == 0);  // BOM gone
  CHECK(c.source.back() == "Thank you very much .");
  LineReader r(d / "tst2013.en");
  std::string line;
  REQUIRE(r.next(line));
  CHECK(r.had_bom());
}

TEST_CASE("sst5: sentence and tree files give the same 8544/1101/2210 labelled sentences", "[data][real][cls]") {
  auto d = nltest::data_path("sst5");
  NL_SKIP_IF_MISSING(d);
  struct S { const char* name; std::size_t n; std::vector<int64_t> hist; };
  for (const auto& s : {S{"train", 8544, {1092, 2218, 1624, 2322, 1288}}, S{"dev", 1101, {139, 289, 229, 279, 165}},
                        S{"test", 2210, {279, 633, 389, 510, 399}}}) {
    auto a = read_label_sentence_file(d / (std::string(s.name) + ".sentences.txt"));
    auto b = read_sst_tree_file(d / (std::string(s.name) + ".txt"));
    REQUIRE(a.size() == s.n);
    REQUIRE(b.size() == s.n);
    std::vector<int64_t> hist(5, 0);
    for (int32_t l : a.labels) {
      REQUIRE(l >= 0);
      REQUIRE(l < 5);
      ++hist[static_cast<std::size_t>(l)];
    }
    CHECK(hist == s.hist);
    CHECK(a.labels == b.labels);
    CHECK(a.sentences == b.sentences);
  }
}

TEST_CASE("sst5: malformed lines name file and line", "[data][cls][errors]") {
  CHECK_THROWS_WITH(parse_sst_tree("(3 (2 a) (2 b)"), Catch::Contains("unbalanced"));
  CHECK_THROWS_WITH(parse_sst_tree("(x (2 a))"), Catch::Contains("not an integer"));
  CHECK(parse_sst_tree("(3 (2 The) (4 (2 Rock) (3 rocks)))").leaves == std::vector<std::string>{"The", "Rock", "rocks"});
  nltest::TempDir t("sst_err");
  CHECK_THROWS_WITH(read_sst_tree_file(t.write("trees.txt", "(3 (2 ok))\n(3 (2 broken)\n")),
                    Catch::Contains("trees.txt:2") && Catch::Contains("unbalanced"));
  CHECK_THROWS_WITH(read_label_sentence_file(t.write("s.txt", "4 ||| fine\n7 ||| bad label\n")),
                    Catch::Contains("s.txt:2") && Catch::Contains("outside [0, 5)"));
  CHECK_THROWS_WITH(read_label_sentence_file(t.write("n.txt", "no separator here\n")), Catch::Contains("n.txt:1"));
}

TEST_CASE("rt: 5331 + 5331 sentences, both copies, and a seeded 8608/964/1089 split", "[data][real][cls]") {
  auto d = nltest::data_path("rt-polarity");
  NL_SKIP_IF_MISSING(d);
  auto kim = read_rt_polarity(d / "rt-polarity.pos", d / "rt-polarity.neg", true);
  auto nltk = read_rt_polarity(d / "utf8" / "rt-polarity.pos", d / "utf8" / "rt-polarity.neg", false);
  REQUIRE(kim.size() == 10662);
  REQUIRE(nltk.size() == 10662);
  CHECK(std::count(kim.labels.begin(), kim.labels.end(), 1) == 5331);
  CHECK(kim.labels == nltk.labels);
  // SOURCE.md: after Latin-1 decoding and 0x85 -> space, 11 positive and 19 negative raw lines differ.
  for (auto [f, n] : {std::pair{"rt-polarity.pos", 11}, {"rt-polarity.neg", 19}}) {
    ReadOptions lat;
    lat.encoding = Encoding::Latin1;
    auto a = read_lines(d / f, lat);
    auto b = read_lines(d / "utf8" / f);
    REQUIRE(a.size() == b.size());
    int differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::string x;
      for (std::size_t k = 0; k < a[i].size(); ++k) {
        if (a[i].compare(k, 2, "\xC2\x85") == 0) { x += ' '; ++k; } else x += a[i][k];
      }
      differ += x != b[i];
    }
    CHECK(differ == n);
  }
  CHECK(kim.sentences[0] == normalize_whitespace(read_lines(d / "rt-polarity.pos", {Encoding::Latin1})[0]));
  for (const auto& s : kim.sentences) CHECK(is_valid_utf8(s));
  auto sp = random_split(10662, 8608, 964, 1089, 1);
  CHECK(sp.train.size() == 8608);
  CHECK(sp.valid.size() == 964);
  CHECK(sp.test.size() == 1089);
  CHECK(sp.unused.size() == 1);
  std::set<int64_t> all(sp.train.begin(), sp.train.end());
  all.insert(sp.valid.begin(), sp.valid.end());
  all.insert(sp.test.begin(), sp.test.end());
  all.insert(sp.unused.begin(), sp.unused.end());
  CHECK(all.size() == 10662);
  CHECK(random_split(10662, 8608, 964, 1089, 1).test == sp.test);
  CHECK(random_split(10662, 8608, 964, 1089, 2).test != sp.test);
}

TEST_CASE("ptb-lm: lines, tokens incl. <eos>, and the 10k vocabulary", "[data][real][lm]") {
  auto d = nltest::data_path("ptb-lm");
  NL_SKIP_IF_MISSING(d);
  auto train = read_word_corpus(d / "ptb.train.txt.gz");
  REQUIRE(train.size() == 42068);
  Dictionary dict;
  for (const auto& l : train)
    for (const auto& w : l) dict.add_symbol(w);
  dict.finalize();
  CHECK(dict.contains("<unk>"));
  CHECK(dict.size() == 4 + 9999 - 1);  // SOURCE.md: 9999 distinct train words; one of them, <unk>, is a special
  int64_t unk = 0;
  CHECK(word_stream(train, dict, &unk).size() == 929589);
  for (auto [f, lines, tokens] : {std::tuple{"ptb.valid.txt", 3370, 73760}, {"ptb.test.txt", 3761, 82430}}) {
    auto c = read_word_corpus(d / f);
    CHECK(c.size() == static_cast<std::size_t>(lines));
    int64_t oov = 0;
    auto s = word_stream(c, dict, &oov);
    CHECK(s.size() == static_cast<std::size_t>(tokens));
    int64_t literal_unk = 0;
    for (const auto& l : c) literal_unk += std::count(l.begin(), l.end(), "<unk>");
    CHECK(oov == literal_unk);  // SOURCE.md: valid/test contain no out-of-vocabulary words
  }
}

TEST_CASE("tinyshakespeare: 1115394 characters, 65 symbols, 90/5/5 split", "[data][real][lm]") {
  auto d = nltest::data_path("tinyshakespeare");
  NL_SKIP_IF_MISSING(d);
  auto chars = read_char_corpus(d / "input.txt");
  REQUIRE(chars.size() == 1115394);
  CHECK(std::set<std::string>(chars.begin(), chars.end()).size() == 65);
  auto sp = contiguous_split(static_cast<int64_t>(chars.size()));
  CHECK(sp.train_end == 1003854);
  CHECK(sp.valid_end - sp.train_end == 55770);
  CHECK(sp.total - sp.valid_end == 55770);
  CHECK(char_symbol("\n") == "<0x0A>");
  CHECK(char_symbol(" ") == "<0x20>");
  CHECK(char_symbol("a") == "a");
}
