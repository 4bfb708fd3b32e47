// The `cls` task (Xu et al. 2019 RT / SST-5 classifier): mean pooling ignores padding (known values and
// identical logits with extra padding), the bench batch and PyTorch twin share the twin's shapes, the
// classifier learns on real SST-5 within 200 updates, and missing or wrong data folders are clear errors.
#include <catch2/catch.hpp>

#include <filesystem>
#include <cmath>
#include <fstream>
#include <unistd.h>

#include "autograd/functions.h"
#include "cli_util.h"
#include "engine/options.h"
#include "nn/models/sentence_classifier.h"
#include "report/metrics_log.h"
#include "report/paper_numbers.h"
#include "tasks/cls/cls_task.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using nltest::run_cli;

namespace {
nl::TransformerConfig tiny_config() {
  nl::TransformerConfig c;
  c.src_vocab = c.tgt_vocab = 20;
  c.d_model = 8;
  c.n_heads = 2;
  c.ffn_dim = 16;
  c.encoder_layers = 2;
  c.normalize_before = true;
  c.dropout = 0.2;
  c.dtype = nl::DType::Float64;
  return c;
}

nl::Tensor ids(const std::vector<int64_t>& v, int64_t rows) {
  return nl::Tensor::from_vector(v, {rows, (int64_t)v.size() / rows});
}

}  // namespace

TEST_CASE("cls: masked_mean_pool averages the non-padding rows only", "[cls]") {
  // states [2, 3, 2]; row 0 keeps positions 0 and 1, row 1 keeps position 0.
  nl::Tensor s = nl::Tensor::from_vector(std::vector<double>{1, 2, 3, 4, 100, 100, 5, 6, -7, 7, 9, 9}, {2, 3, 2});
  nl::Tensor pad = ids({0, 0, 1, 0, 1, 1}, 2);
  auto p = nl::masked_mean_pool(nl::Variable(s), pad).data().to_vector<double>();
  CHECK(p == std::vector<double>{2, 3, 5, 6});
  CHECK_THROWS_WITH(nl::masked_mean_pool(nl::Variable(s), ids({0, 0, 0, 1, 1, 1}, 2)), Contains("row 1 is all padding"));
  CHECK_THROWS_WITH(nl::masked_mean_pool(nl::Variable(s), ids({0, 0, 0, 0}, 2)), Contains("padding_mask [B, T]"));
}

TEST_CASE("cls: the classifier's logits do not change with extra padding", "[cls]") {
  nl::manual_seed(3);
  nl::SentenceClassifier m(tiny_config(), 5);
  m.eval();
  const int64_t P = 1;  // <pad>
  nl::Tensor a = ids({5, 6, 7, 2, 8, 9, 2, P}, 2);
  nl::Tensor b = ids({5, 6, 7, 2, P, P, P, 8, 9, 2, P, P, P, P}, 2);
  nl::Tensor alone = ids({8, 9, 2}, 1);
  auto la = m.forward(a).data().to_vector<double>(), lb = m.forward(b).data().to_vector<double>();
  auto l1 = m.forward(alone).data().to_vector<double>();
  REQUIRE(la.size() == 10);
  for (size_t i = 0; i < la.size(); ++i) CHECK(la[i] == Approx(lb[i]).margin(1e-12));
  for (size_t i = 0; i < 5; ++i) CHECK(la[5 + i] == Approx(l1[i]).margin(1e-12));
  // Padding must matter only through the mask: changing a real token changes the logits.
  auto lc = m.forward(ids({5, 6, 4, 2, 8, 9, 2, P}, 2)).data().to_vector<double>();
  CHECK(std::abs(lc[0] - la[0]) > 1e-9);
}

TEST_CASE("cls: the bench batch and the PyTorch twin have the same shapes", "[cls]") {
  auto task = nlapp::make_cls_task();
  nlapp::OptionSchema schema(task->settings());
  nlohmann::json s = schema.defaults();
  auto [script, args] = task->pytorch_bench(s);
  CHECK(script == "pytorch_transformer.py");
  CHECK(args == "--config cls --norm layernorm --batch-size 128 --seq-len 32");
  s["seed"] = 1;
  auto model = task->build_model(s);
  auto batch = task->bench_batch(s);
  CHECK(batch->items == 128);
  nl::NoGradGuard ng;
  nl::Variable loss = task->loss(*model, *batch);
  CHECK(std::isfinite(loss.item()));
  CHECK(loss.item() == Approx(std::log(5.0)).margin(0.5));
  s["norm"] = "adanorm";
  CHECK(task->pytorch_bench(s).first.empty());  // the twin has no AdaNorm: no false comparison
  CHECK(nlapp::paper_number("xu2019", "sst5", "layernorm") == 39.23);
  CHECK(nlapp::paper_number("xu2019", "rt", "layernorm") == 77.21);
  CHECK(nlapp::paper_number("xu2019", "rt", "detach-mean") == 75.02);       // Table 3
  CHECK(nlapp::paper_number("xu2019", "sst5", "detach-variance") == 41.74);  // Table 3
  CHECK(std::isnan(nlapp::paper_number("xu2019", "rt", "batchnorm")));
}

TEST_CASE("cls: the loss falls clearly within 200 updates on real SST-5", "[cls][e2e]") {
  const fs::path raw = nltest::data_path("sst5");
  NL_SKIP_IF_MISSING(raw);
  const fs::path tmp = nltest::temp_dir("cls-learn");
  auto [rc, out] = run_cli("data prepare sst5 --data " + raw.string() + " --out " + (tmp / "data").string());
  REQUIRE(rc == 0);
  // The paper's layout at a smaller width and batch so the test stays fast.
  std::tie(rc, out) = run_cli("train cls --config sst5 --data " + (tmp / "data").string() + " --out " +
                              (tmp / "run").string() +
                              " --d-model 64 --ffn-dim 128 --encoder-layers 2 --max-tokens 1024 --lr 0.001"
                              " --max-update 200 --quiet --threads 1");
  INFO(out);
  REQUIRE(rc == 0);
  auto lines = nlapp::read_metrics_log(tmp / "run" / "metrics.jsonl");
  std::vector<double> train;
  for (const auto& l : lines)
    if (l.contains("train_loss")) train.push_back(l["train_loss"].get<double>());
  REQUIRE(train.size() >= 10);
  INFO("first " << train.front() << " last " << train.back());
  CHECK(train.front() > 1.5);  // about ln 5 at the start
  CHECK((train.end()[-1] + train.end()[-2]) / 2 < train.front() - 0.15);
  std::ifstream rf(tmp / "run" / "results.json");
  auto res = nlohmann::json::parse(rf);
  CHECK(res["updates"] == 200);
  const double acc = res["test"]["acc"].get<double>();
  CHECK((acc > 0.0 && acc < 100.0));  // 200 small updates learn the loss, not yet the accuracy

  // A batch-statistic norm runs in the encoder slots with the padding mask passed through
  // (nl::norm_forward; tests/nn/test_transformer_norm_slots.cpp checks that pads change nothing).
  std::tie(rc, out) = run_cli("train cls --data " + (tmp / "data").string() + " --out " + (tmp / "bn").string() +
                              " --d-model 64 --ffn-dim 128 --encoder-layers 2 --norm batchnorm --max-update 2 --quiet --threads 1");
  INFO(out);
  CHECK(rc == 0);
  fs::remove_all(tmp);
}

TEST_CASE("cls: missing or wrong data folders are clear errors", "[cls]") {
  const fs::path tmp = nltest::temp_dir("cls-errors");
  auto [rc, out] = run_cli("train cls --data " + (tmp / "sst5").string() + " --quiet --out " + (tmp / "r").string());
  CHECK(rc != 0);
  CHECK_THAT(out, Contains("no prepared classification data") && Contains("normlab data prepare sst5"));
  std::tie(rc, out) = run_cli("train cls --config rt --data " + (tmp / "rt").string() + " --quiet --out " + (tmp / "r").string());
  CHECK(rc != 0);
  CHECK_THAT(out, Contains("normlab data prepare rt --data ../shared/data/rt-polarity"));
  fs::create_directories(tmp / "mt");
  std::ofstream(tmp / "mt" / "summary.json") << R"({"task": "multi30k", "direction": "en-de"})";
  std::tie(rc, out) = run_cli("train cls --data " + (tmp / "mt").string() + " --quiet --out " + (tmp / "r").string());
  CHECK(rc != 0);
  CHECK_THAT(out, Contains("prepared for 'multi30k'") && Contains("not a classification data set"));
  std::ofstream(tmp / "mt" / "summary.json") << R"({"task": "sst5", "num_classes": 5})";
  std::tie(rc, out) = run_cli("train cls --data " + (tmp / "mt").string() + " --quiet --out " + (tmp / "r").string());
  CHECK(rc != 0);
  CHECK_THAT(out, Contains("dict.txt' is missing") && Contains("normlab data prepare sst5"));
  fs::remove_all(tmp);
}
