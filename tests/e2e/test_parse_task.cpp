// The `parse` task: it learns on real UD English EWT (the loss of 200 Adam updates falls clearly), a
// short run on the NLTK WSJ sample writes test UAS/LAS and parsing speed, and missing data or a bad
// config give clear errors.
#include <catch2/catch.hpp>

#include "cli_util.h"

#include <filesystem>
#include <fstream>
#include <numeric>
#include <unistd.h>

#include "engine/options.h"
#include "engine/trainer_settings.h"
#include "optim/optimizer.h"
#include "tasks/parse/parse_task.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using nltest::run_cli;

namespace {
}  // namespace

TEST_CASE("parse: the loss falls clearly within 200 updates on UD English EWT", "[e2e][parse]") {
  const fs::path data = nltest::data_path("ud-english-ewt");
  NL_SKIP_IF_MISSING(data / "en_ewt-ud-train.conllu.gz");
  auto task = nlapp::make_parse_task();
  nlapp::OptionSchema schema(nlapp::trainer_settings());
  schema.add(task->settings());
  nlohmann::json s = schema.defaults();
  s["data"] = data.string();
  s["batch_size"] = 256;  // a quarter of the paper's batch keeps the test fast; the model is the paper's
  task->setup(s);
  nl::manual_seed(1);
  auto model = task->build_model(s);
  nl::Adam opt(model->parameters(), nl::AdamOptions{});
  std::vector<double> losses;
  for (int64_t i = 0; i < 200; ++i) {
    auto b = task->train_batch(0, i);
    opt.zero_grad();
    nl::Variable l = task->loss(*model, *b);
    l.backward();
    opt.step();
    losses.push_back(l.item());
  }
  const double first = std::accumulate(losses.begin(), losses.begin() + 10, 0.0) / 10;
  const double last = std::accumulate(losses.end() - 10, losses.end(), 0.0) / 10;
  INFO("mean loss of updates 1-10: " << first << ", of updates 191-200: " << last);
  CHECK(std::isfinite(last));
  CHECK(last < 0.4 * first);
}

TEST_CASE("parse: one epoch on the NLTK WSJ sample writes test UAS and sentences per second", "[e2e][parse]") {
  const fs::path zip = nltest::data_path("ptb-dep-nltk/dependency_treebank.zip");
  NL_SKIP_IF_MISSING(zip);
  fs::path out = nltest::temp_dir("parse-ptb");
  auto [rc, text] = run_cli("train parse --config ptb-dep --data " + zip.string() +
                            " --max-epoch 1 --hidden 64 --quiet --no-save --out " + out.string());
  INFO(text);
  REQUIRE(rc == 0);
  std::ifstream rf(out / "results.json");
  auto res = nlohmann::json::parse(rf);
  CHECK(res["test"]["uas"].get<double>() > 40.0);
  CHECK(res["test"]["las"].get<double>() == res["test"]["uas"].get<double>());  // unlabelled data
  CHECK(res["test"]["sentences_per_s"].get<double>() > 0.0);
  CHECK_THAT(res["data"].get<std::string>(), Contains("NLTK WSJ sample") && Contains("LAS = UAS"));
  fs::remove_all(out);
}

TEST_CASE("parse: missing data and bad settings give clear errors", "[cli][parse]") {
  fs::path empty = nltest::temp_dir("parse-empty");
  fs::create_directories(empty);
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {"train parse --data /nonexistent/ewt --quiet", "treebank '/nonexistent/ewt' not found: pass --data"},
      {"train parse --data " + empty.string() + " --quiet", "has no *-train.conllu[.gz] file"},
      {"train parse --activation tanh", "--activation must be one of: cube, relu"},
      {"train parse --batch-size 0", "--batch-size must be a whole number from 1"},
      {"train parse --pos ud", "--pos must be one of: xpos, upos"},
      {"train parse --config nope", "no config 'nope' for task parse; available: ptb-dep, ud-ewt"},
      {"train parse --norm instancenorm", "--norm must be one of"},
  };
  for (const auto& c : cases) {
    auto [rc, text] = run_cli(c.args);
    INFO(c.args << " -> " << text);
    CHECK(rc != 0);
    CHECK(rc < 128);
    CHECK_THAT(text, Contains(c.expect));
  }
  fs::remove_all(empty);
}

TEST_CASE("parse: --pos upos on data without UPOS names the fix", "[cli][parse]") {
  const fs::path zip = nltest::data_path("ptb-dep-nltk/dependency_treebank.zip");
  NL_SKIP_IF_MISSING(zip);
  const fs::path out = nltest::temp_dir("parse-upos");
  auto [rc, text] = run_cli("train parse --data " + zip.string() + " --pos upos --quiet --out " + out.string());
  INFO(text);
  CHECK(rc == 1);
  CHECK_THAT(text, Contains("no UPOS tags: use --pos xpos"));
  fs::remove_all(out);
}
