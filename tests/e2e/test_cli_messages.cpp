// What a new user meets on the command line (issue 29, items 2 and 9-11): CLI11's messages rewritten in
// words (unknown command, a global option after the command, an unknown flag, range checks), `--config ""`, a second run
// into a folder that holds one, resume messages that say what happens, mpirun without --distributed,
// --help's defaults, and generate's hint that never proposes overwriting another task's folder.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "cli_util.h"
#include "data_text/temp_dir.h"
#include "common/output_listing.h"
#include "engine/task.h"
#include "tasks/cls/cls_corpus.h"
#include "tasks/mnist.h"
#include "tasks/mt/mt_corpus.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using nltest::run_cli;
using Catch::Matchers::Contains;


TEST_CASE("cli: a mistyped command gets a suggestion, a missing one the list", "[cli][errors]") {
  auto [rc, text] = run_cli("trian mnist");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("error: unknown command 'trian' (did you mean 'train'?)") && Contains("reproduce"));
  std::tie(rc, text) = run_cli("");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("normlab needs a command: one of") && Contains("train"));
}

TEST_CASE("cli: a global option after the command says where it goes", "[cli][errors]") {
  auto [rc, text] = run_cli("train mnist --device cuda");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("--device is a global option: give it before the command, e.g. `normlab --device cuda train ...`"));
  CHECK_THAT(text, !Contains("cuda --device"));
}

TEST_CASE("cli: a flag a command does not have is an error naming it, for every kind of command", "[cli][errors]") {
  // Commands added under a verb that lists tasks (bench transformer, reproduce xu2019, ...) inherited its
  // allow_extras and ran with their defaults, the flag dropped. `timeout`: such a command would train.
  for (const char* cmd : {"train mnist", "bench transformer", "bench cls", "reproduce xu2019", "reproduce powernorm",
                          "reproduce mnist", "reproduce ni2024-capacity", "reproduce ni2024-resnet", "grad explain --norm layernorm",
                          "grad stats", "grad probe mnist", "grad batch-stats mt", "ln-theory hessian",
                          "data bleu --hyp h.txt --ref r.txt", "report", "average-checkpoints --inputs d --output o",
                          "generate mt --path p", "translate --path p"}) {
    INFO(cmd);
    auto [rc, text] = run_cli(std::string(cmd) + " --no-such-flag 3", "timeout 60");
    CHECK(rc != 0);
    CHECK(rc != 124);  // refused at once, not run until the timeout
    const std::string c(cmd), path = c.substr(0, c.find(" --"));  // the command, without its required flags
    CHECK_THAT(text, Contains("unknown option --no-such-flag for `normlab " + path + "`"));
  }
}

TEST_CASE("cli: an unknown flag gets the nearest name, the names holding its stem, or the command that has it",
          "[cli][errors]") {
  auto [rc, text] = run_cli("train mnist --max-epochs 3");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("unknown option --max-epochs for `normlab train mnist` (did you mean --max-epoch?)"));
  std::tie(rc, text) = run_cli("train mnist --epochs 3");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("its options with 'epoch' in their name:") && Contains("--max-epoch"));
  std::tie(rc, text) = run_cli("train cls --label-smoothing 0.1");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("--label-smoothing is an option of `normlab train mt`, not of `normlab train cls`"));
  CHECK_THAT(text, Contains("`normlab train cls --help` lists its options"));
  std::tie(rc, text) = run_cli("reproduce xu2019 --task parse");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("unknown option --task for `normlab reproduce xu2019` (did you mean --tasks?)"));
  std::tie(rc, text) = run_cli("ln-theory hessian --foo");  // 3 edits from --d: no typo of it
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("unknown option --foo for `normlab ln-theory hessian`") && !Contains("did you mean"));
}

TEST_CASE("cli: CLI11's range checks read in words", "[cli][errors]") {
  auto [rc, text] = run_cli("average-checkpoints --inputs x --output y --num-update-checkpoints 0");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("--num-update-checkpoints must be a number greater than 0 (got 0)"));
  CHECK_THAT(text, !Contains("179769"));
  std::tie(rc, text) = run_cli("train mnist --threads 0");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("--threads must be") && Contains("(got '0')"));
  std::tie(rc, text) = run_cli("translate --path x --beam 5000");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("--beam must be a whole number from 1 to 1000 (got 5000)"));
}

TEST_CASE("cli: --config \"\" is an error, not the defaults", "[cli][errors]") {
  auto [rc, text] = run_cli("train mnist --config '' --max-update 1 --out /nonexistent/x");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("--config needs a config name") && Contains("default, one-epoch") && Contains("empty"));
}

TEST_CASE("cli: --help shows the values a run without --config uses", "[cli]") {
  auto [rc, text] = run_cli("train mnist --help");
  CHECK(rc == 0);
  CHECK_THAT(text, Contains("default.json applied") && Contains("--config NAME takes them from"));
  // mnist's default.json validates every 430 updates; the built-in trainer default is 0 (off).
  const auto at = text.find("--validate-interval-updates");
  REQUIRE(at != std::string::npos);
  CHECK_THAT(text.substr(at, text.find('\n', text.find("default", at)) - at), Contains("default 430"));
}

TEST_CASE("cli: mpirun without --distributed is refused", "[cli][errors]") {
  // The launcher's environment as Open MPI sets it for each of 2 processes.
  auto [rc, text] = run_cli("train mnist --max-update 1 --out /nonexistent/x", "OMPI_COMM_WORLD_SIZE=2");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("started by mpirun as one of 2 processes without --distributed") && Contains("--distributed"));
}

TEST_CASE("cli: a second run into a folder that holds one, and resume messages that say what happens", "[cli][e2e]") {
  NL_SKIP_IF_MISSING(nlapp::kDefaultMnistData);
  const nltest::TempDir t("climsg_mnist");
  const fs::path out = t.path / "run";
  const std::string base = "train mnist --config one-epoch --quiet --out " + out.string();
  auto [rc, text] = run_cli(base + " --max-update 3");
  INFO(text);
  REQUIRE(rc == 0);
  CHECK_THAT(text, Contains("best valid acc") && Contains("; test acc "));
  // A new run (another norm) into the same folder: refused, the first run's records stay.
  std::tie(rc, text) = run_cli(base + " --max-update 3 --norm adanorm");
  INFO(text);
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("already holds a run") && Contains("--overwrite"));
  // Resume with a raised --max-update and other output options: trains on, and says so.
  std::tie(rc, text) = run_cli("train mnist --config one-epoch --out " + out.string() +
                               " --resume --max-update 5 --log-interval 1 --validate-interval-updates 2 --save-interval 0");
  INFO(text);
  CHECK(rc == 0);
  CHECK_THAT(text, Contains("this run had finished at update 3; the raised --max-update / --max-epoch let it train on"));
  CHECK_THAT(text, !Contains("already finished") && Contains("5 updates"));
  // Resume at the limit: nothing to train, says so.
  std::tie(rc, text) = run_cli("train mnist --config one-epoch --out " + out.string() + " --resume --max-update 5");
  INFO(text);
  CHECK(rc == 0);
  CHECK_THAT(text, Contains("this run already finished at update 5: nothing to train"));
}

TEST_CASE("mt corpus: the hint for a folder of another task never proposes overwriting it", "[cli][errors]") {
  const nltest::TempDir t("climsg_sst5");
  const fs::path dir = t.path / "sst5";
  fs::create_directories(dir);
  std::ofstream(dir / "summary.json") << R"({"task": "sst5", "splits": []})";
  std::ofstream(dir / "dict.txt") << "a 1\n";
  try {
    nlapp::MtCorpus::load(dir);
    FAIL("loaded a corpus without a direction");
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Contains("holds other files, not a translation corpus"));
    CHECK_THAT(m, !Contains("--out " + dir.string() + "`"));
    CHECK_THAT(m, Contains("--out " + (dir.parent_path() / "multi30k").string()));
  }
}

TEST_CASE("cls and mt corpora: raw data passed as --data gets a prepare command with a separate --out",
          "[cli][errors]") {
  // `train cls --data ../shared/data/sst5` suggested `data prepare sst5 ... --out ../shared/data/sst5`,
  // which would write into the raw data folder.
  const nltest::TempDir t("climsg_raw");
  const fs::path sst = t.path / "sst5", m30k = t.path / "multi30k";
  fs::create_directories(sst);
  std::ofstream(sst / "train.txt") << "(3 (2 a) (3 good))\n";
  CHECK_THROWS_WITH(nlapp::ClsCorpus::load(sst),
                    Contains("'" + sst.string() + "' holds the raw sst5 files, not prepared data") &&
                        Contains("`normlab data prepare sst5 --data " + sst.string() + " --out data-bin/sst5`") &&
                        Contains("then pass --data data-bin/sst5") && !Contains("--out " + sst.string()));
  fs::create_directories(m30k / "raw");
  std::ofstream(m30k / "raw" / "train.en.gz") << "";
  CHECK_THROWS_WITH(nlapp::MtCorpus::load(m30k),
                    Contains("holds the raw multi30k files, not a prepared corpus") &&
                        Contains("--data " + m30k.string() + " --out data-bin/multi30k`") &&
                        !Contains("--out " + m30k.string()));
  // A folder of other files whose sibling name is taken (here by raw data): data-bin, never the sibling.
  CHECK_THROWS_WITH(nlapp::MtCorpus::load(sst), Contains("holds other files, not a translation corpus") &&
                                                    Contains("--out data-bin/multi30k`") &&
                                                    !Contains("--out " + m30k.string()));
}

TEST_CASE("labels: a metric that names its split is not prefixed again", "[cli]") {
  CHECK(nlapp::metric_label("test", "test_acc") == "test acc");    // was "test test_acc"
  CHECK(nlapp::metric_label("valid", "train_acc") == "train acc");  // was "valid train_acc" (lnnet)
  CHECK(nlapp::metric_label("valid", "acc") == "valid acc");
  CHECK(nlapp::metric_label("test", "bleu") == "test bleu");
}

TEST_CASE("written listing: a command names only what is in its folder", "[cli]") {
  // `reproduce xu2019` said it wrote figure1-3 SVGs that did not exist; `reproduce powernorm` a runs/ it
  // had not created.
  const nltest::TempDir t("climsg_listing");
  const fs::path dir = t.path / "out";
  CHECK(nlapp::written_listing(dir) == "written: nothing in " + dir.string());
  fs::create_directories(dir / "runs");
  std::ofstream(dir / "results.md") << "x";
  std::ofstream(dir / "figure2.svg") << "x";
  std::ofstream(dir / ".normlab.lock") << "x";
  CHECK(nlapp::written_listing(dir) == "written: " + (dir / "").string() + ": figure2.svg, results.md, runs/");
}
