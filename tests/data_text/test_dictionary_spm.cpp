#include <catch2/catch.hpp>

#include "data/text/dictionary.h"
#include "data/text/line_reader.h"
#include "data/text/sentencepiece_model.h"
#include "data/text/utf8.h"
#include "data_text/temp_dir.h"
#include "test_paths.h"

using namespace nl::data;

TEST_CASE("dictionary: fairseq specials, count order, ties by symbol, threshold, padding", "[data][dict]") {
  Dictionary d;
  CHECK(d.size() == 4);
  CHECK(d.symbol(0) == "<s>");
  CHECK(d.symbol(1) == "<pad>");
  CHECK(d.symbol(2) == "</s>");
  CHECK(d.symbol(3) == "<unk>");
  for (const char* line : {"b a c a", "z y a b", "c rare"}) d.add_line(line);
  d.finalize(2);  // threshold 2: "z", "y", "rare" (count 1) dropped
  REQUIRE(d.size() == 7);
  CHECK(d.symbol(4) == "a");  // count 3
  CHECK(d.symbol(5) == "b");  // count 2, tie with "c" broken by bytes
  CHECK(d.symbol(6) == "c");
  int64_t unk = 0;
  CHECK(d.encode_line("a z c", true, &unk) == std::vector<int32_t>{4, 3, 6, 2});
  CHECK(unk == 1);
  CHECK(d.decode({4, 5, 2, 6}) == "a b");
  Dictionary p;
  p.add_line("x y z");
  p.finalize(-1, -1, 8);
  CHECK(p.size() == 8);
  CHECK(p.symbol(7) == "madeupword0000");
}

TEST_CASE("dictionary: dict.txt round trip and malformed lines", "[data][dict][errors]") {
  nltest::TempDir t("dict");
  Dictionary d;
  d.add_line("der die das der der die");
  d.finalize();
  d.save(t.path / "dict.txt");
  CHECK(read_lines(t.path / "dict.txt") == std::vector<std::string>{"der 3", "die 2", "das 1"});
  auto l = Dictionary::load(t.path / "dict.txt");
  REQUIRE(l.size() == d.size());
  for (int32_t i = 0; i < d.size(); ++i) {
    CHECK(l.symbol(i) == d.symbol(i));
    CHECK(l.count(i) == d.count(i));
  }
  CHECK_THROWS_WITH(Dictionary::load(t.write("bad.txt", "a 1\nb x\n")), Catch::Contains("bad.txt:2"));
  CHECK_THROWS_WITH(Dictionary::load(t.write("dup.txt", "a 1\na 2\n")), Catch::Contains("duplicate"));
}

TEST_CASE("sentencepiece: train BPE and unigram on real sentences, encode/decode round trip", "[data][spm][real]") {
  auto p = nltest::data_path("multi30k/raw/train.de.gz");
  NL_SKIP_IF_MISSING(p);
  auto lines = read_lines(p);
  std::vector<std::string> train(lines.begin(), lines.begin() + 3000);
  auto val = read_lines(nltest::data_path("multi30k/raw/val.de.gz"));
  nltest::TempDir t("spm");
  for (std::string type : {"bpe", "unigram"}) {
    SentencePieceOptions o;
    o.model_type = type;
    o.vocab_size = 1000;
    train_sentencepiece(train, t.path / (type + ".model"), o);
    SentencePieceModel m(t.path / (type + ".model"));
    CHECK(m.size() == 1000);
    std::size_t ok = 0, pieces = 0, words = 0;
    for (const auto& s : val) {
      auto ps = m.encode(s);
      pieces += ps.size();
      words += split_whitespace(s).size();
      ok += m.decode(ps) == s;  // raw Multi30k has no leading/trailing/double spaces to normalize
    }
    CHECK(ok == val.size());  // byte fallback: exact round trip even for unseen characters
    CHECK(pieces > words);    // a 1000-piece model splits words into subwords
  }
  CHECK_THROWS_WITH(SentencePieceModel(t.path / "missing.model"), Catch::Contains("not found"));
}

TEST_CASE("sentencepiece: a bad vocabulary size names the size, the text and the fix, not spm's source lines",
          "[data][spm][errors]") {
  const std::vector<std::string> train = {"a small sentence", "another one here"};
  nltest::TempDir t("spm_bad_size");
  for (std::string type : {"bpe", "unigram"}) {
    SentencePieceOptions o;
    o.model_type = type;
    o.source = "tst2012.en + tst2012.vi";
    o.vocab_size = 0;
    CHECK_THROWS_WITH(train_sentencepiece(train, t.path / "m.model", o),
                      Catch::Contains("SentencePiece could not train a vocabulary of 0 on tst2012.en + tst2012.vi: ") &&
                          Catch::Contains("pass a larger --vocab-size"));
    o.vocab_size = 20;  // below the characters + 256 byte pieces + specials this text needs
    CHECK_THROWS_WITH(train_sentencepiece(train, t.path / "m.model", o),
                      Catch::Contains("SentencePiece could not train a vocabulary of 20 on tst2012.en + tst2012.vi: ") &&
                          Catch::Contains("--vocab-size 20 is too small") && Catch::Contains("try a larger --vocab-size"));
    CHECK_THROWS_WITH(train_sentencepiece(train, t.path / "m.model", o), !Catch::Contains("trainer_interface.cc"));
    CHECK_FALSE(std::filesystem::exists(t.path / "m.model"));
  }
}
