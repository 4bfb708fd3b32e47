// End to end through the `normlab` binary: `data prepare` on real data writes readable binaries and
// a summary; bad input exits 1 with "error: ..." naming the problem.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/text/dictionary.h"
#include "data/text/line_reader.h"
#include "data/text/sentencepiece_model.h"
#include "data/text/token_dataset.h"
#include "data_text/temp_dir.h"
#include "test_paths.h"

namespace {
int run(const std::string& args, const std::filesystem::path& log) {
  std::string cmd = std::string(NORMLAB_BINARY) + " " + args + " > '" + log.string() + "' 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}
std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("normlab data prepare sst5 and rt: files, summary and split ids", "[data][prepare][real]") {
  auto sst = nltest::data_path("sst5");
  auto rt = nltest::data_path("rt-polarity");
  NL_SKIP_IF_MISSING(sst);
  NL_SKIP_IF_MISSING(rt);
  nltest::TempDir t("prep");
  REQUIRE(run("data prepare sst5 --data '" + sst.string() + "' --out '" + (t.path / "sst5").string() + "'", t.path / "log") == 0);
  std::string table = slurp(t.path / "log");
  CHECK(table.find("train") != std::string::npos);
  CHECK(table.find("8544") != std::string::npos);
  nl::data::TokenDataset train(t.path / "sst5" / "train.input.bin"), labels(t.path / "sst5" / "train.label.bin");
  CHECK(train.size() == 8544);
  CHECK(labels.size() == 8544);
  auto dict = nl::data::Dictionary::load(t.path / "sst5" / "dict.txt");
  CHECK(dict.size() == train.vocab_size());
  // first train sentence decodes back to the text (every train word is in the dictionary)
  auto s0 = train[0];
  CHECK(dict.decode(std::vector<int32_t>(s0.begin(), s0.end())).rfind("The Rock is destined", 0) == 0);
  CHECK(labels[0][0] == 3);
  nlohmann::json sum;
  std::ifstream(t.path / "sst5" / "summary.json") >> sum;
  CHECK(sum["splits"][1]["sentences"] == 1101);

  REQUIRE(run("data prepare rt --data '" + rt.string() + "' --out '" + (t.path / "rt").string() + "' --seed 1", t.path / "log") == 0);
  nlohmann::json ids;
  std::ifstream(t.path / "rt" / "split_ids.json") >> ids;
  CHECK(ids["train"].size() == 8608);
  CHECK(ids["valid"].size() == 964);
  CHECK(ids["test"].size() == 1089);
  CHECK(ids["seed"] == 1);
}

TEST_CASE("normlab data prepare: bad input exits 1 with a clear message", "[data][prepare][errors]") {
  nltest::TempDir t("prep_err");
  CHECK(run("data prepare sst5 --data '" + t.path.string() + "' --out '" + (t.path / "o").string() + "'", t.path / "log") == 1);
  std::string m = slurp(t.path / "log");
  CHECK(m.find("error:") != std::string::npos);
  CHECK(m.find("train.sentences.txt") != std::string::npos);
  CHECK(run("data prepare nosuchtask --data '" + t.path.string() + "' --out '" + (t.path / "o").string() + "'", t.path / "log") == 1);
  CHECK(slurp(t.path / "log").find("unknown task") != std::string::npos);
  // a parallel corpus with unequal sides
  std::filesystem::create_directories(t.path / "iw");
  t.write("iw/tst2012.en", "a\nb\n");
  t.write("iw/tst2012.vi", "a\n");
  t.write("iw/tst2013.en", "a\n");
  t.write("iw/tst2013.vi", "a\n");
  CHECK(run("data prepare iwslt15 --data '" + (t.path / "iw").string() + "' --out '" + (t.path / "o").string() + "'", t.path / "log") == 1);
  m = slurp(t.path / "log");
  CHECK(m.find("tst2012.en has 2 lines") != std::string::npos);
}

TEST_CASE("normlab data prepare multi30k: spm model + dict + binaries decode back to the raw text",
          "[data][prepare][real][spm]") {
  auto d = nltest::data_path("multi30k");
  NL_SKIP_IF_MISSING(d);
  nltest::TempDir t("prep_mt");
  auto out = t.path / "m30k";
  REQUIRE(run("data prepare multi30k --data '" + d.string() + "' --out '" + out.string() +
                  "' --direction de-en --vocab-size 2000",
              t.path / "log") == 0);
  nl::data::TokenDataset src(out / "valid.de-en.de.bin"), tgt(out / "valid.de-en.en.bin");
  REQUIRE(src.size() == 1014);
  REQUIRE(tgt.size() == 1014);
  auto dict = nl::data::Dictionary::load(out / "dict.en.txt");
  CHECK(dict.size() == tgt.vocab_size());
  nl::data::SentencePieceModel spm(out / "spm.model");
  auto refs = nl::data::read_lines(d / "raw" / "val.en.gz");
  std::size_t exact = 0, eos = 0;
  for (int64_t i = 0; i < tgt.size(); ++i) {
    auto ids = tgt[i];
    eos += !ids.empty() && ids.back() == nl::data::Dictionary::kEos;
    std::vector<std::string> pieces;
    for (std::size_t k = 0; k + 1 < ids.size(); ++k) pieces.push_back(dict.symbol(ids[k]));
    exact += spm.decode(pieces) == refs[static_cast<std::size_t>(i)];
  }
  CHECK(eos == 1014);
  // pieces unseen in train map to <unk>, so allow a few sentences that do not decode exactly
  CHECK(exact >= 1000);
}
