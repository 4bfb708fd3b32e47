// `--bf16` end to end through the `normlab` binary (issue 26): short MNIST and Multi30k trainings in mixed
// precision reduce the loss and record their precision; checkpoints stay float32; a resume in another
// precision is refused with the reason; a task reproduction keeps bf16 runs in their own registry column.
#include <catch2/catch.hpp>

#include "bf16_test_util.h"
#include "cli_util.h"

#include <filesystem>
#include <fstream>

#include "backends/mixed_precision.h"
#include "optim/checkpoint.h"
#include "report/metrics_log.h"
#include "tasks/mnist.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using nltest::run_cli;
using Catch::Matchers::Contains;

namespace {
nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}
// First and last logged training loss of a run.
std::pair<double, double> loss_ends(const fs::path& metrics) {
  double first = -1, last = -1;
  for (const auto& l : nlapp::read_metrics_log(metrics))
    if (l.contains("train_loss")) (first < 0 ? first : last) = l["train_loss"].get<double>();
  return {first, last};
}
}  // namespace

TEST_CASE("bf16 e2e: MNIST in mixed precision learns, records its precision, keeps float32 checkpoints, and "
          "refuses a resume in the other precision",
          "[e2e][bf16]") {
  NL_SKIP_WITHOUT_ONEDNN();
  NL_SKIP_IF_MISSING(nlapp::kDefaultMnistData);
  const fs::path out = nltest::temp_dir("bf16-mnist");
  auto [rc, text] = run_cli("train mnist --bf16 --max-update 60 --log-interval 10 --no-test --quiet --out " + out.string());
  INFO(text);
  REQUIRE(rc == 0);
  CHECK_THAT(text, Contains("; no test;"));  // --no-test: no 'test acc nan' in the summary line
  const auto [first, last] = loss_ends(out / "metrics.jsonl");
  CHECK(last < first);
  CHECK(read_json(out / "results.json")["precision"] == "bfloat16");
  CHECK(read_json(out / "config.json")["settings"]["bf16"] == true);
  const nl::Checkpoint ck = nl::load_checkpoint(out / "checkpoint_last.safetensors");
  for (const auto& [name, t] : ck.tensors)
    if (t.dtype() != nl::DType::Int64) CHECK(t.dtype() == nl::DType::Float32);
  // The same run continued in float32 is another experiment.
  std::tie(rc, text) = run_cli("train mnist --resume --max-update 70 --quiet --out " + out.string());
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("--bf16: true in the checkpoint, false now"));
  CHECK_THAT(text, Contains("one precision"));
  // ...while continuing it in bfloat16 works.
  std::tie(rc, text) = run_cli("train mnist --bf16 --resume --max-update 70 --no-test --quiet --out " + out.string());
  CHECK(rc == 0);
  fs::remove_all(out);
}

TEST_CASE("bf16 e2e: float32 results record float32, float32 products under --bf16 say so once", "[e2e][bf16]") {
  NL_SKIP_WITHOUT_ONEDNN();
  NL_SKIP_IF_MISSING(nlapp::kDefaultMnistData);
  const fs::path out = nltest::temp_dir("bf16-mnist32");
  auto [rc, text] = run_cli("train mnist --max-update 3 --no-test --quiet --out " + out.string());
  REQUIRE(rc == 0);
  CHECK(read_json(out / "results.json")["precision"] == "float32");
  std::tie(rc, text) = run_cli("train mnist --bf16 --max-update 3 --no-test --quiet --overwrite --out " + out.string(),
                               "NORMLAB_BF16_FALLBACK=1");
  INFO(text);
  CHECK(rc == 0);
  CHECK_THAT(text, Contains("--bf16 products run in float32 on the bfloat16 operands on this CPU") &&
                       Contains("NORMLAB_BF16_FALLBACK is set"));
  fs::remove_all(out);
}

TEST_CASE("bf16 e2e: 60 updates of a small Transformer on Multi30k in mixed precision reduce the loss",
          "[e2e][bf16][mt]") {
  NL_SKIP_WITHOUT_ONEDNN();
  const fs::path raw = nltest::data_path("multi30k");
  NL_SKIP_IF_MISSING(raw);
  const fs::path tmp = nltest::temp_dir("bf16-mt");
  auto [rc, text] = run_cli("data prepare multi30k --data " + raw.string() + " --out " + (tmp / "data").string() +
                            " --vocab-size 2000");
  REQUIRE(rc == 0);
  std::tie(rc, text) = run_cli(
      "train mt --config multi30k --bf16 --data " + (tmp / "data").string() + " --out " + (tmp / "run").string() +
      " --d-model 64 --n-heads 4 --ffn-dim 128 --encoder-layers 1 --decoder-layers 1 --dropout 0.1"
      " --attention-dropout 0 --max-tokens 2048 --warmup-updates 20 --lr 0.003 --quiet --threads 1"
      " --max-update 60 --log-interval 10 --no-test --no-save");
  INFO(text);
  REQUIRE(rc == 0);
  const auto [first, last] = loss_ends(tmp / "run" / "metrics.jsonl");
  CHECK(last < first - 0.5);
  fs::remove_all(tmp);
}
