// Every task on a device: mnist, mt (beam-search final test and generate included), cls, lm,
// resnet-cifar, vit-cifar, lnnet and parse trained by the one Trainer on "cuda:0" of a FakeDevice (the
// core-only test backend in the CUDA slot: host memory, the composite forms of the fused kernels) give
// the cpu's losses and validation metric, keep every parameter on the device, their checkpoints
// resume across devices both ways, and their training steps copy nothing between host and device in
// steady state (engine/device_runs.h). Each needs its real data set and is skipped
// without it. No GPU is involved.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "cli_util.h"
#include "engine/device_runs.h"
#include "engine/run_device.h"
#include "engine/task_cli.h"
#include "tasks/cls/cls_task.h"
#include "tasks/lm/lm_task.h"
#include "tasks/lnnet/lnnet_task.h"
#include "tasks/mnist.h"
#include "tasks/mt/mt_generate.h"
#include "tasks/mt/mt_task.h"
#include "tasks/parse/parse_task.h"
#include "tasks/resnet_cifar/resnet_cifar_task.h"
#include "tasks/vit_cifar/vit_cifar_task.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using Catch::Matchers::Contains;

namespace {
// Float32 everywhere; the fake device runs LayerNorm, softmax, attention, cross-entropy and Adam in
// their composite forms, which round differently from the cpu's fused kernels.
constexpr double kTol = 1e-6;

fs::path tmp(const std::string& name) {
  return fs::temp_directory_path() / ("normlab-device-e2e-" + name + "-" + std::to_string(::getpid()));
}

json settings(nlapp::Task& task, const std::string& config, std::map<std::string, std::string> flags) {
  flags["threads"] = "1";
  json s = nlapp::resolve_task_settings(task, config, flags);
  task.setup(s);
  return s;
}

// `normlab data prepare NAME` of the shared raw data into dir/data; returns that folder.
fs::path prepare(const std::string& name, const fs::path& raw, const fs::path& dir, const std::string& extra = "") {
  auto [rc, out] = nltest::run_cli("data prepare " + name + " --data " + raw.string() + " --out " +
                                   (dir / "data").string() + extra);
  INFO(out);
  REQUIRE(rc == 0);
  return dir / "data";
}

// Trains make()'s task with `config` and `flags` for `half` + `half` updates on the cpu and on the fake
// cuda:0 (check_cross_device_resume) in a temporary folder.
void cross_device(std::unique_ptr<nlapp::Task> (*make)(), const std::string& name, const std::string& config,
                  std::map<std::string, std::string> flags, int64_t half = 2, double tol = kTol) {
  nltest::FakeDevice fake;  // outlives the task
  auto task = make();
  const json s = settings(*task, config, std::move(flags));
  const fs::path dir = tmp(name);
  nltest::check_cross_device_resume(*task, s, dir, half, tol);
  nltest::check_steady_state_transfers(*task, s, fake, dir / "steady");
  fs::remove_all(dir);
}

// A few images of the first CIFAR-10 batch.
const std::map<std::string, std::string> kFewCifar = {
    {"batches", "1"}, {"valid_size", "64"}, {"train_subset", "64"}, {"test_subset", "64"}, {"batch_size", "16"}};
}  // namespace

TEST_CASE("device e2e: mnist on cuda:0 (fake) trains as on the cpu and resumes across devices", "[e2e][device]") {
  const fs::path raw = nltest::data_path("mnist");
  NL_SKIP_IF_MISSING(raw / "train-images-idx3-ubyte.gz");
  cross_device(nlapp::make_mnist_task, "mnist", "", {{"data", raw.string()}, {"hidden", "32"}, {"batch_size", "16"}});
}

TEST_CASE("device e2e: mt on cuda:0 (fake) trains - validates - beam-searches as on the cpu", "[e2e][device][mt]") {
  const fs::path raw = nltest::data_path("multi30k");
  NL_SKIP_IF_MISSING(raw);
  const fs::path dir = tmp("mt");
  fs::remove_all(dir);
  const fs::path data = prepare("multi30k", raw, dir, " --vocab-size 2000");
  nltest::FakeDevice fake;  // outlives the task
  auto task = nlapp::make_mt_task();
  // The tiny shape of the mt e2e tests, dropout on (the same masks on both devices), a short beam-2 final test.
  const json s = settings(*task, "multi30k",
                          {{"data", data.string()}, {"d_model", "32"}, {"n_heads", "4"}, {"ffn_dim", "64"},
                           {"encoder_layers", "1"}, {"decoder_layers", "1"}, {"dropout", "0.1"},
                           {"max_tokens", "1024"}, {"warmup_updates", "10"}, {"beam", "2"}, {"max_len_b", "5"}});
  nltest::check_cross_device_resume(*task, s, dir / "runs", 2, kTol);
  nltest::check_steady_state_transfers(*task, s, fake, dir / "steady");
  // The batch-statistic norms (masked BatchNorm, PowerNorm with its warmup) with clipping and two
  // micro-batches per update: their steps copy nothing either.
  for (const char* norm : {"batchnorm", "powernorm"}) {
    INFO(norm);
    json b = s;
    b["norm"] = norm;
    b["clip_norm"] = 0.5;
    b["update_freq"] = 2;
    nltest::check_steady_state_transfers(*task, b, fake, dir / "steady");
  }
  // The final test translated on the device; the file is the same as the cpu-only run's.
  std::ifstream a(dir / "runs" / "A" / "generate-test.txt"), c(dir / "runs" / "C" / "generate-test.txt");
  const std::string ta((std::istreambuf_iterator<char>(a)), {}), tc((std::istreambuf_iterator<char>(c)), {});
  CHECK(!ta.empty());
  CHECK(ta == tc);
  // generate / translate: the cpu run's checkpoint loads onto the run device (`normlab --device cuda:0
  // generate mt`) and translates as on the cpu.
  const fs::path ck = dir / "runs" / "A" / "checkpoint_last.safetensors";
  const nlapp::MtModel on_cpu = nlapp::load_mt_model(ck, "");
  nlapp::set_run_device(nl::Device::cuda(0));
  const nlapp::MtModel on_dev = nlapp::load_mt_model(ck, "");
  nlapp::set_run_device(nl::Device::cpu());
  CHECK(on_cpu.model->device() == nl::Device::cpu());
  CHECK(on_dev.model->device() == nl::Device::cuda(0));
  CHECK(on_dev.settings["device"] == "cuda:0");
  const nl::GenerationOptions g = nlapp::generation_options(s);
  const auto hc = nlapp::translate_split(*on_cpu.model, *on_cpu.corpus, "valid", g, 64).text;
  const auto hd = nlapp::translate_split(*on_dev.model, *on_dev.corpus, "valid", g, 64).text;
  CHECK(hc.size() == 1014);
  CHECK(hc == hd);
  fs::remove_all(dir);
}

TEST_CASE("device e2e: cls on cuda:0 (fake) trains as on the cpu and resumes across devices", "[e2e][device][cls]") {
  const fs::path raw = nltest::data_path("sst5");
  NL_SKIP_IF_MISSING(raw);
  const fs::path dir = tmp("cls");
  fs::remove_all(dir);
  const fs::path data = prepare("sst5", raw, dir);
  cross_device(nlapp::make_cls_task, "cls-runs", "sst5",
               {{"data", data.string()}, {"d_model", "32"}, {"n_heads", "4"}, {"ffn_dim", "64"}, {"encoder_layers", "1"},
                {"max_tokens", "1024"}});
  fs::remove_all(dir);
}

TEST_CASE("device e2e: lm (Transformer-XL memory) on cuda:0 (fake) trains as on the cpu", "[e2e][device][lm]") {
  const fs::path data = nltest::data_path("tinyshakespeare");
  NL_SKIP_IF_MISSING(data / "input.txt");
  // The fake device outlives the task, whose memory tensors live on cuda:0.
  cross_device(nlapp::make_lm_task, "lm", "tinyshakespeare",
               {{"data", data.string()}, {"d_model", "32"}, {"n_heads", "4"}, {"ffn_dim", "64"}, {"decoder_layers", "1"},
                {"batch_size", "4"}, {"tokens_per_sample", "16"}, {"mem_len", "16"}, {"eval_batch_size", "40"},
                {"lr_scheduler", "fixed"}, {"warmup_updates", "0"}});
}

TEST_CASE("device e2e: a host batch fed to an mnist model on cuda:0 is a clear error", "[e2e][device]") {
  const fs::path raw = nltest::data_path("mnist");
  NL_SKIP_IF_MISSING(raw / "train-images-idx3-ubyte.gz");
  nltest::FakeDevice fake;
  auto task = nlapp::make_mnist_task();
  const json s = settings(*task, "", {{"data", raw.string()}, {"hidden", "32"}});
  nl::manual_seed(1);
  auto model = task->build_model(s);
  model->to(nl::Device::cuda(0));
  auto batch = task->train_batch(0, 0);
  CHECK_THROWS_WITH(task->loss(*model, *batch), Contains("different devices") && Contains(".to(Device)"));
  nlapp::to_device(*batch, model->device());
  CHECK(std::isfinite(task->loss(*model, *batch).item()));
}

TEST_CASE("device e2e: resnet-cifar - vit-cifar - lnnet - parse on cuda:0 (fake) train as on the cpu", "[e2e][device]") {
  SECTION("resnet-cifar") {
    NL_SKIP_IF_MISSING(nltest::data_path("cifar10") / "data_batch_1.bin.gz");
    auto f = kFewCifar;
    f.insert({{"data", nltest::data_path("cifar10").string()}, {"depth", "8"}});
    cross_device(nlapp::make_resnet_cifar_task, "resnet", "", f, 1);
  }
  SECTION("vit-cifar") {
    NL_SKIP_IF_MISSING(nltest::data_path("cifar10") / "data_batch_1.bin.gz");
    auto f = kFewCifar;
    f.insert({{"data", nltest::data_path("cifar10").string()}, {"d_model", "16"}, {"layers", "1"}, {"n_heads", "2"},
              {"ffn_dim", "32"}, {"patch", "8"}, {"dropout", "0.1"}});
    cross_device(nlapp::make_vit_cifar_task, "vit", "", f, 1);
  }
  SECTION("lnnet") {
    NL_SKIP_IF_MISSING(nltest::data_path("mnist") / "train-images-idx3-ubyte.gz");
    cross_device(nlapp::make_lnnet_task, "lnnet", "",
                 {{"data", nltest::data_path("mnist").string()}, {"width", "16"}, {"depth", "2"}, {"valid_size", "64"},
                  {"train_subset", "64"}, {"test_subset", "64"}, {"batch_size", "16"}, {"norm", "lng"}, {"groups", "4"}},
                 1);
  }
  SECTION("parse") {
    NL_SKIP_IF_MISSING(nltest::data_path("ud-english-ewt") / "en_ewt-ud-train.conllu.gz");
    cross_device(nlapp::make_parse_task, "parse", "",
                 {{"data", nltest::data_path("ud-english-ewt").string()}, {"hidden", "32"}, {"embed_dim", "8"},
                  {"batch_size", "256"}},
                 1, 1e-5);  // measured 1.4e-6: the cube activation amplifies the composite kernels' rounding
  }
}
