// The `lm` task: the segment layouts (every evaluation token scored exactly once, padding ignored),
// PPL and BPC from a hand-computed NLL, the byte vocabulary, the memory carried between training
// segments, the paper columns, clear data errors, and each config learning on its real data.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "autograd/functions.h"
#include "cli_util.h"
#include "engine/options.h"
#include "engine/task_cli.h"
#include "engine/task_registry.h"
#include "optim/clip.h"
#include "optim/optimizer.h"
#include "report/paper_numbers.h"
#include "tasks/lm/lm_batches.h"
#include "tasks/lm/lm_corpus.h"
#include "tasks/lm/lm_task.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using nltest::run_cli;

namespace {
}  // namespace

TEST_CASE("lm: the training grid drops the remainder, the evaluation grid scores every token once", "[lm]") {
  const std::vector<int32_t> s = {10, 11, 12, 13, 14, 15, 16, 17};  // 7 (input, target) pairs
  auto tr = nlapp::train_grid(s, 2);
  CHECK(tr.cols == 3);
  CHECK(tr.input == std::vector<int32_t>{10, 11, 12, 13, 14, 15});
  CHECK(tr.target == std::vector<int32_t>{11, 12, 13, 14, 15, 16});
  CHECK_THROWS_WITH(nlapp::train_grid(s, 8), Contains("--batch-size"));
  auto ev = nlapp::eval_grid(s, 3);  // 7 pairs in rows of 3: 3 rows, 2 padded slots
  CHECK(ev.rows == 3);
  CHECK(ev.cols == 3);
  CHECK(ev.target == std::vector<int32_t>{11, 12, 13, 14, 15, 16, 17, -100, -100});
  auto b = nlapp::grid_segment(ev, 2, 2);  // the last column, clipped to the grid
  CHECK(b.tokens.shape() == nl::Shape{3, 1});
  CHECK(b.items == 2);
  CHECK(b.pad_mask.to_vector<int64_t>() == std::vector<int64_t>{0, 0, 1});
  CHECK_FALSE(nlapp::grid_segment(ev, 0, 1).pad_mask.defined());
  // Every target of the stream appears once across the segments.
  int64_t n = 0;
  for (int64_t c = 0; c < ev.cols; c += 2) n += nlapp::grid_segment(ev, c, 2).items;
  CHECK(n == 7);
}

TEST_CASE("lm: PPL and BPC from a hand-computed NLL, padding not counted", "[lm]") {
  // Logits of 3 positions over V = 4: uniform (NLL ln 4), [ln 3, 0, 0, 0] with target 0 (p = 1/2,
  // NLL ln 2), and a padded position that must not count.
  const double l3 = std::log(3.0);
  nl::Variable logits(nl::Tensor::from_vector(std::vector<double>{0, 0, 0, 0, l3, 0, 0, 0, 9, 0, 0, 0}, {3, 4}));
  nl::Tensor tgt = nl::Tensor::from_vector(std::vector<int64_t>{2, 0, nlapp::kLmIgnore}, {3});
  const double mean = nl::cross_entropy(logits, tgt, 0.0, nlapp::kLmIgnore).item();
  CHECK(mean == Approx((std::log(4.0) + std::log(2.0)) / 2));
  auto m = nlapp::lm_scores(mean * 2, 2);
  CHECK(m.at("loss") == Approx(1.5 * std::log(2.0)));
  CHECK(m.at("bpc") == Approx(1.5));                 // (2 bits + 1 bit) / 2
  CHECK(m.at("ppl") == Approx(std::pow(2.0, 1.5)));  // exp of the mean NLL
  CHECK_THROWS(nlapp::lm_scores(1.0, 0));
}

TEST_CASE("lm: byte vocabulary from the train part, unknown bytes counted", "[lm]") {
  auto c = nlapp::byte_corpus("abcab" "ca" "cz", 5, 7);
  CHECK(c.vocab == 4);  // <unk>, a, b, c
  CHECK(c.train == std::vector<int32_t>{1, 2, 3, 1, 2});
  CHECK(c.valid == std::vector<int32_t>{3, 1});
  CHECK(c.test == std::vector<int32_t>{3, 0});
  CHECK(c.n_unk == 1);
  CHECK(nlapp::paper_number("xu2019", "enwiki8", "layernorm") == 1.07);
  CHECK(nlapp::paper_number("xu2019", "enwiki8", "none") == 1.04);
  CHECK(nlapp::paper_number("xu2019", "enwiki8", "detachnorm") == 1.12);
  CHECK(std::isnan(nlapp::paper_number("xu2019", "enwiki8", "powernorm")));
  CHECK(nlapp::paper_number("shen2020", "ptb", "powernorm") == 47.6);
}

TEST_CASE("lm: the memory carries over consecutive training segments only", "[lm]") {
  const fs::path data = nltest::data_path("tinyshakespeare");
  NL_SKIP_IF_MISSING(data / "input.txt");
  auto task = nlapp::make_lm_task();
  nlapp::OptionSchema schema(task->settings());
  nlohmann::json s = schema.defaults();
  s.update(task->trainer_defaults());
  s["seed"] = 1;
  s["data"] = data.string();
  s.update({{"d_model", 16}, {"n_heads", 2}, {"ffn_dim", 32}, {"decoder_layers", 1}, {"tokens_per_sample", 8},
            {"mem_len", 8}, {"batch_size", 2}, {"dropout", 0.0}, {"activation_dropout", 0.0}});
  task->setup(s);
  CHECK(task->info().metric == "bpc");
  auto model = task->build_model(s);
  model->eval();
  nl::NoGradGuard ng;
  const double first = task->loss(*model, *task->train_batch(0, 1)).item();  // no memory before it
  task->loss(*model, *task->train_batch(0, 0));
  const double with_mem = task->loss(*model, *task->train_batch(0, 1)).item();
  CHECK(std::abs(with_mem - first) > 1e-7);
  task->loss(*model, *task->train_batch(0, 3));  // not consecutive: starts afresh
  CHECK(task->loss(*model, *task->train_batch(0, 1)).item() == Approx(first).epsilon(1e-6));
  auto cols = task->paper_columns(s);
  REQUIRE(cols.size() == 1);
  CHECK_THAT(cols[0].first, Contains("Enwiki8"));
  CHECK(cols[0].second == 1.07);
}

TEST_CASE("lm: missing data is a clear error", "[lm]") {
  const fs::path tmp = nltest::temp_dir("lm-errors");
  auto [rc, out] = run_cli("train lm --data " + (tmp / "none").string() + " --quiet --out " + (tmp / "r").string());
  CHECK(rc != 0);
  CHECK_THAT(out, Contains("input.txt not found") && Contains("tinyshakespeare"));
  std::tie(rc, out) = run_cli("train lm --config enwik8 --data " + (tmp / "enwik8").string() + " --quiet --out " +
                              (tmp / "r").string());
  CHECK(rc != 0);
  CHECK_THAT(out, Contains("not found") && Contains("mattmahoney.net/dc/enwik8.zip"));
  fs::create_directories(tmp);
  std::ofstream(tmp / "enwik8") << "tiny";
  std::tie(rc, out) = run_cli("train lm --config enwik8 --data " + (tmp / "enwik8").string() + " --quiet --out " +
                              (tmp / "r").string());
  CHECK(rc != 0);
  CHECK_THAT(out, Contains("too few for enwik8"));
  fs::remove_all(tmp);
}

TEST_CASE("lm: an empty or too small input.txt names the file, its size and the size needed", "[lm]") {
  const fs::path tmp = nltest::temp_dir("lm-small-input");
  fs::create_directories(tmp);
  std::ofstream(tmp / "input.txt").close();  // empty
  CHECK_THROWS_WITH(nlapp::load_lm_corpus("tinyshakespeare", tmp),
                    Contains((tmp / "input.txt").string() + " is empty (0 bytes)") &&
                        Contains("90/5/5 % train/valid/test split needs at least 31 bytes") &&
                        Contains("restore the full file"));
  std::ofstream(tmp / "input.txt") << "tiny";
  CHECK_THROWS_WITH(nlapp::load_lm_corpus("tinyshakespeare", tmp), Contains("has only 4 bytes"));
  CHECK_THROWS_WITH(nlapp::byte_corpus("abc", 0, 2), Contains("do not fit a text of 3 bytes"));
  std::ofstream(tmp / "input.txt") << std::string(31, 'a');
  CHECK(nlapp::load_lm_corpus("tinyshakespeare", tmp).test.size() == 2);
  fs::remove_all(tmp);
}

namespace {
// Trains `config` (apps/configs/lm/) scaled down by `flags` for `updates` Adam updates through the
// task's own batches and loss (the memory carried as in training), without the evaluations of a full
// run so that the test stays fast. Returns the mean loss of the first and of the last 10 updates.
std::pair<double, double> short_run(const std::string& config, std::map<std::string, std::string> flags, int updates) {
  auto task = nlapp::make_lm_task();
  flags["seed"] = "1";
  nlohmann::json s = nlapp::resolve_task_settings(*task, config, flags);
  task->setup(s);
  nl::manual_seed(1);
  auto model = task->build_model(s);
  model->train();
  nl::AdamOptions o;
  o.lr = s.at("lr").get<double>();
  nl::Adam opt(model->parameters(), o);
  std::vector<double> losses;
  for (int u = 0; u < updates; ++u) {
    opt.zero_grad();
    nl::Variable loss = task->loss(*model, *task->train_batch(0, u % task->epoch_size(0)));
    losses.push_back(loss.item());
    loss.backward();
    nl::clip_grad_norm_(model->parameters(), s.at("clip_norm").get<double>());
    opt.step();
  }
  auto mean10 = [&](size_t from) {
    double m = 0;
    for (size_t i = from; i < from + 10; ++i) m += losses[i] / 10;
    return m;
  };
  return {mean10(0), mean10(losses.size() - 10)};
}
}  // namespace

TEST_CASE("lm: the tinyshakespeare config learns within 200 updates", "[lm][e2e]") {
  const fs::path data = nltest::data_path("tinyshakespeare");
  NL_SKIP_IF_MISSING(data / "input.txt");
  auto [first, last] = short_run("tinyshakespeare",
                                 {{"data", data.string()}, {"d_model", "64"}, {"ffn_dim", "128"}, {"decoder_layers", "1"},
                                  {"batch_size", "8"}, {"tokens_per_sample", "32"}, {"mem_len", "32"}, {"lr", "0.003"}},
                                 150);
  INFO("first " << first << " last " << last);
  CHECK(first > 3.0);         // about ln 65 = 4.2 at the start
  CHECK(last < first - 1.0);  // down to the unigram entropy (3.3 nats) and below
}

TEST_CASE("lm: the ptb config learns within 200 updates", "[lm][e2e]") {
  const fs::path data = nltest::data_path("ptb-lm");
  NL_SKIP_IF_MISSING(data / "ptb.train.txt.gz");
  auto [first, last] = short_run("ptb",
                                 {{"data", data.string()}, {"d_model", "64"}, {"ffn_dim", "128"}, {"decoder_layers", "1"},
                                  {"batch_size", "8"}, {"lr", "0.003"}},
                                 100);
  INFO("first " << first << " last " << last);
  CHECK(first > 8.0);         // about ln 10,003 = 9.2 at the start
  CHECK(last < first - 1.5);
}
