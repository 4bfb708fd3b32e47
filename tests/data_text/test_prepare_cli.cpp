// End to end through the `normlab` binary: `data prepare` on real data writes readable binaries and
// a summary; bad input exits 1 with "error: ..." naming the problem.
#include <catch2/catch.hpp>

#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/text/dictionary.h"
#include "data/text/classification.h"
#include "data/text/line_reader.h"
#include "data/text/prepare.h"
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

TEST_CASE("normlab data prepare: absurd dictionary and split flags exit 1 naming the flag", "[data][prepare][errors]") {
  nltest::TempDir t("prep_flags");
  // Before: --padding-factor 1e9 padded the dictionary for minutes (a hang), the others were accepted.
  for (const std::string flag : {"--padding-factor 1000000000", "--padding-factor 0", "--threshold -1", "--nwords 2",
                                 "--vocab-size 0", "--seed -1"}) {
    INFO(flag);
    CHECK(run("data prepare sst5 --data '" + t.path.string() + "' --out '" + (t.path / "o").string() + "' " + flag,
              t.path / "log") != 0);
    CHECK(slurp(t.path / "log").find(flag.substr(0, flag.find(' '))) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(t.path / "o"));
  }
}

TEST_CASE("data prepare rt: too few lines name both files, their line counts and the fix", "[data][prepare][errors]") {
  using Catch::Matchers::Contains;
  nltest::TempDir t("prep_rt_short");
  const auto pos = t.write("rt-polarity.pos", "a fine film\nanother good one\nwell made\n");
  const auto neg = t.write("rt-polarity.neg", "");  // emptied
  nl::data::PrepareOptions o;
  o.data_dir = t.path;
  o.out_dir = t.path / "out";
  CHECK_THROWS_WITH(nl::data::prepare_task("rt", o),
                    Contains(pos.string() + " has 3 lines and " + neg.string() + " is empty") &&
                        Contains("too few for the fixed 8608/964/1089 train/valid/test split (10661") &&
                        Contains("restore the data set"));
  CHECK_FALSE(std::filesystem::exists(t.path / "out"));
  CHECK_THROWS_WITH(nl::data::random_split(5331, 8608, 964, 1089, 1),
                    Contains("split needs 10661 examples, but there are only 5331"));
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

namespace {
// Leftover staging folders (".<name>.partial-<pid>") in `dir`.
int partial_folders(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    n += e.path().filename().string().find(".partial-") != std::string::npos;
  return n;
}
// A tiny SST-5 folder in the "LABEL ||| sentence" format; `test_line` is the test split's only line.
void write_sst5(const nltest::TempDir& t, const std::string& test_line) {
  std::filesystem::create_directories(t.path / "sst");
  t.write("sst/train.sentences.txt", "3 ||| a good film\n1 ||| a bad film\n");
  t.write("sst/dev.sentences.txt", "4 ||| good\n");
  t.write("sst/test.sentences.txt", test_line);
}
}  // namespace

TEST_CASE("normlab data prepare: a failure leaves no new or partial --out folder", "[data][prepare][errors]") {
  nltest::TempDir t("prep_clean");
  // Missing input: neither --out nor its missing parents may be left behind.
  CHECK(run("data prepare sst5 --data '" + t.path.string() + "' --out '" + (t.path / "a" / "b" / "out").string() + "'",
            t.path / "log") == 1);
  CHECK_FALSE(std::filesystem::exists(t.path / "a"));
  CHECK(partial_folders(t.path) == 0);
  // A malformed split (label 9 of 5 classes) after two good ones: no folder, no partial files.
  write_sst5(t, "9 ||| bad label\n");
  const auto out = t.path / "out";
  CHECK(run("data prepare sst5 --data '" + (t.path / "sst").string() + "' --out '" + out.string() + "'", t.path / "log") == 1);
  CHECK(slurp(t.path / "log").find("label 9 outside [0, 5)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK(partial_folders(t.path) == 0);
  // An existing --out keeps its content on failure, and gains the prepared files on success.
  std::filesystem::create_directories(out);
  t.write("out/notes.txt", "mine");
  CHECK(run("data prepare sst5 --data '" + (t.path / "sst").string() + "' --out '" + out.string() + "'", t.path / "log") == 1);
  CHECK(std::filesystem::directory_iterator(out)->path().filename() == "notes.txt");
  CHECK(std::distance(std::filesystem::directory_iterator(out), std::filesystem::directory_iterator()) == 1);
  write_sst5(t, "2 ||| fine\n");
  REQUIRE(run("data prepare sst5 --data '" + (t.path / "sst").string() + "' --out '" + out.string() + "'", t.path / "log") == 0);
  CHECK(slurp(out / "notes.txt") == "mine");
  CHECK(nl::data::TokenDataset(out / "train.input.bin").size() == 2);
  CHECK(std::filesystem::exists(out / "summary.json"));
  CHECK(partial_folders(t.path) == 0);
}

TEST_CASE("normlab data bleu: errors point to its own options", "[data][bleu][errors]") {
  nltest::TempDir t("bleu_err");
  const auto ref = t.write("ref.txt", "a b c\n");
  CHECK(run("data bleu --hyp '" + (t.path / "nope.txt").string() + "' --ref '" + ref.string() + "'", t.path / "log") == 1);
  std::string m = slurp(t.path / "log");
  CHECK(m.find("nope.txt: --hyp file not found") != std::string::npos);
  CHECK(m.find("--data") == std::string::npos);
  const auto bad = t.write("latin.txt", "caf\xE9\n");
  CHECK(run("data bleu --hyp '" + bad.string() + "' --ref '" + ref.string() + "'", t.path / "log") == 1);
  m = slurp(t.path / "log");
  CHECK(m.find("latin.txt:1: invalid UTF-8 byte 0xE9") != std::string::npos);
  CHECK(m.find("iconv -f latin1 -t utf-8") != std::string::npos);
  CHECK(m.find("encoding option") == std::string::npos);  // `data bleu` has no such option
}

TEST_CASE("normlab data prepare: a too small SentencePiece vocabulary names --vocab-size and the minimum",
          "[data][prepare][spm][errors]") {
  nltest::TempDir t("prep_spm");
  std::filesystem::create_directories(t.path / "iw");
  for (const char* f : {"iw/tst2012.en", "iw/tst2012.vi", "iw/tst2013.en", "iw/tst2013.vi"})
    t.write(f, "a small sentence\nanother one here\n");
  const auto out = t.path / "o";
  CHECK(run("data prepare iwslt15 --data '" + (t.path / "iw").string() + "' --out '" + out.string() +
                "' --subword bpe --vocab-size 20",
            t.path / "log") == 1);
  const std::string m = slurp(t.path / "log");
  CHECK(m.find("--vocab-size 20 is too small") != std::string::npos);
  CHECK(m.find("try a larger --vocab-size") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("normlab data prepare ud-ewt: a CoNLL-U sentence that is no tree is refused, naming file and sent_id",
          "[data][prepare][conllu][errors]") {
  // A cycle, a self-loop, two roots and no root: each once passed `data prepare` and only made `train parse`
  // die later with "arc_standard_oracle: stuck (not a well-formed tree)", naming neither file nor sentence.
  nltest::TempDir t("prep_tree");
  const std::string ok = "# sent_id = ok-1\n1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n2\tran\trun\tVERB\tVBD\t_\t0\troot\t_\t_\n\n";
  {
    gzFile f = gzopen((t.path / "en_ewt-ud-train.conllu.gz").c_str(), "wb");
    gzwrite(f, ok.data(), (unsigned)ok.size());
    gzclose(f);
  }
  t.write("en_ewt-ud-test.conllu", ok);
  struct Case {
    const char* heads;  // HEAD of words 1, 2, 3
    const char* why;
  };
  for (const Case c : {Case{"2 3 2", "words 2 -> 3 -> 2 form a cycle"}, Case{"0 2 2", "word 2 is its own head"},
                       Case{"0 1 0", "2 words have HEAD 0 (words 1, 3)"}, Case{"2 3 1", "form a cycle"}}) {
    std::istringstream hs(c.heads);
    std::string dev = ok + "# sent_id = weblog-42\n";
    for (int i = 1; i <= 3; ++i) {
      std::string h;
      hs >> h;
      dev += std::to_string(i) + "\tw\tw\tX\tX\t_\t" + h + "\tdep\t_\t_\n";
    }
    t.write("en_ewt-ud-dev.conllu", dev + "\n");
    INFO(c.heads);
    CHECK(run("data prepare ud-ewt --data '" + t.path.string() + "' --out '" + (t.path / "o").string() + "'",
              t.path / "log") == 1);
    const std::string m = slurp(t.path / "log");
    INFO(m);
    CHECK(m.find("en_ewt-ud-dev.conllu:5") != std::string::npos);
    CHECK(m.find("sentence \"weblog-42\" is not a dependency tree") != std::string::npos);
    CHECK(m.find(c.why) != std::string::npos);
  }
}

TEST_CASE("normlab data prepare ud-ewt reads the files train parse reads, and says train reads the raw files",
          "[data][prepare][conllu]") {
  // `train parse` accepts any <name>-{train,dev,test}.conllu[.gz]; prepare wanted exactly en_ewt-ud-*.
  nltest::TempDir t("prep_tbnames");
  const std::string ok = "# sent_id = s1\n1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n2\tran\trun\tVERB\tVBD\t_\t0\troot\t_\t_\n\n";
  for (const char* f : {"mytb-ud-train.conllu", "mytb-ud-dev.conllu", "mytb-ud-test.conllu"}) t.write(f, ok);
  CHECK(run("data prepare ud-ewt --data '" + t.path.string() + "' --out '" + (t.path / "o").string() + "'", t.path / "log") == 0);
  const std::string m = slurp(t.path / "log");
  INFO(m);
  CHECK(std::filesystem::exists(t.path / "o" / "train.head.bin"));
  CHECK(m.find("note: `normlab train parse --config ud-ewt --data " + t.path.string() + "` reads the raw files itself") !=
        std::string::npos);
}
