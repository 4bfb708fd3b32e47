// The Trainer on a device (settings["device"], the global `normlab --device`): on "cuda:0" of a
// FakeDevice (host memory behind the CUDA slot, no GPU needed) the model, its gradients, the optimizer
// moments and the batches live on the device and the run matches the cpu's; checkpoints cross devices
// both ways; a host tensor mixed into a device model, a bad device name and --distributed on a GPU are
// clear errors. Module::to(Device) and to_device on their own.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "backends/core_only_backend.h"
#include "device_runs.h"
#include "engine/experiment.h"
#include "engine/run_device.h"
#include "engine/task_cli.h"
#include "engine/trainer.h"
#include "nn/linear.h"
#include "nn/norm/batch_norm.h"
#include "optim/checkpoint.h"
#include "optim/clip.h"
#include "toy_task.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {
fs::path tmp(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("normlab-device-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

// The toy regression with gradient clipping (on the device) and `optimizer`.
json toy_settings(nltest::ToyTask& t, const std::string& optimizer = "adamw") {
  json s = nlapp::task_schema(t).defaults();
  s["max_epoch"] = 100;
  s["optimizer"] = optimizer;
  s["momentum"] = optimizer == "sgd" ? 0.9 : 0.0;
  s["weight_decay"] = 0.01;
  s["clip_norm"] = 0.5;
  t.setup(s);
  return s;
}
}  // namespace

TEST_CASE("device: Module::to moves parameters - gradients - buffers in place and keeps the Variables", "[engine][device]") {
  nltest::FakeDevice fake;
  const nl::Device cuda = nl::Device::cuda(0);
  nl::Linear lin(3, 2);
  nl::Variable w = lin.weight;
  const std::vector<double> before = w.data().to_vector<double>();
  w.set_grad(nl::Tensor::ones({2, 3}));
  CHECK(lin.device() == nl::Device::cpu());
  lin.to(cuda);
  CHECK(lin.device() == cuda);
  CHECK(lin.weight.device() == cuda);
  CHECK(w.device() == cuda);  // the same Variable: an optimizer holding it sees the move
  CHECK(w.grad().device() == cuda);
  CHECK(w.data().to_vector<double>() == before);
  CHECK(w.grad().to_vector<double>() == std::vector<double>(6, 1.0));

  nl::BatchNorm bn(4);
  bn.to(cuda);
  for (const auto& [name, b] : bn.named_buffers()) {
    INFO(name);
    CHECK(b.device() == cuda);
  }
  bn.to(nl::Device::cpu());
  CHECK(bn.device() == nl::Device::cpu());
  CHECK(nl::Linear(2, 2).device() == nl::Device::cpu());
}

TEST_CASE("device: Module::to a missing GPU says so and changes nothing", "[engine][device]") {
  if (nl::device_count(nl::DeviceType::CUDA) > 0) return;  // a real GPU is present: nothing to refuse
  nl::Linear lin(3, 2);
  CHECK_THROWS_WITH(lin.to(nl::Device::cuda(0)), Contains("no CUDA device") && Contains("use --device cpu"));
  CHECK(lin.device() == nl::Device::cpu());
}

TEST_CASE("device: gradient clipping on the device gives the cpu's norm", "[engine][device]") {
  nltest::FakeDevice fake;
  nl::Variable a(nl::Tensor::from_vector<float>({3, 4}, {2}), true), b(nl::Tensor::from_vector<float>({12}, {1}), true);
  a.set_grad(nl::Tensor::from_vector<float>({3, 4}, {2}).to(nl::Device::cuda(0)));
  b.set_grad(nl::Tensor::from_vector<float>({12}, {1}).to(nl::Device::cuda(0)));
  CHECK(nl::grad_norm({a, b}) == 13.0);
  CHECK(nl::clip_grad_norm_({a, b}, 1.3) == 13.0);
  CHECK(a.grad().device() == nl::Device::cuda(0));
  CHECK(a.grad().to_vector<double>()[1] == Approx(0.4).epsilon(1e-6));
}

TEST_CASE("device: to_device moves every tensor a batch lists and skips undefined ones", "[engine][device]") {
  nltest::FakeDevice fake;
  nltest::ToyBatch b;
  b.x = nl::Tensor::ones({2, 4});
  nlapp::to_device(b, nl::Device::cuda(0));
  CHECK(b.x.device() == nl::Device::cuda(0));
  CHECK_FALSE(b.y.defined());
  nlapp::TaskBatch plain;  // lists no tensors: nothing to move
  CHECK(plain.tensors().empty());
}

TEST_CASE("device: the settings name the device - cpu when absent - bad names are clear errors", "[engine][device]") {
  CHECK(nlapp::settings_device(json::object()) == nl::Device::cpu());
  CHECK(nlapp::settings_device({{"device", "cpu"}}) == nl::Device::cpu());
  CHECK_THROWS_WITH(nlapp::settings_device({{"device", "gpu"}}), Contains("unknown device 'gpu'"));
  CHECK_THROWS_WITH(nlapp::settings_device({{"device", 0}}), Contains("must be a string"));
  nltest::FakeDevice fake;
  CHECK(nlapp::settings_device({{"device", "cuda"}}) == nl::Device::cuda(0));
  CHECK_THROWS_WITH(nlapp::settings_device({{"device", "cuda:1"}}), Contains("cuda:1 does not exist"));
}

TEST_CASE("device: the toy run on cuda:0 equals the cpu run - checkpoints resume across devices", "[engine][device]") {
  nltest::FakeDevice fake;
  nltest::ToyTask t;
  // 8 batches per epoch: 4 + 4 updates, the resume in the middle of the first epoch.
  const fs::path dir = tmp("toy");
  SECTION("sgd with momentum: only core kernels, so the fake device is bit-identical to the cpu") {
    nltest::check_cross_device_resume(t, toy_settings(t, "sgd"), dir, 4, 0.0);
  }
  SECTION("adamw: the composite adam_step rounds unlike the fused one (float32)") {
    nltest::check_cross_device_resume(t, toy_settings(t, "adamw"), dir, 4, 1e-5);
  }
  // The record names the device it finished on: the backend's device model for cuda:0, nothing for the cpu.
  const json on_device = json::parse(std::ifstream(dir / "C" / "results.json"));
  CHECK(on_device["environment"]["device"] == json({{"name", "cuda:0"}, {"model", "core-only test backend"}}));
  CHECK_FALSE(json::parse(std::ifstream(dir / "A" / "results.json"))["environment"].contains("device"));
  fs::remove_all(dir);
}

TEST_CASE("device: optimizer moments live on the parameters' device and load from host tensors", "[engine][device]") {
  nltest::FakeDevice fake;
  const nl::Device cuda = nl::Device::cuda(0);
  auto step = [](nl::Linear& lin, nl::Optimizer& opt) {
    for (auto p : lin.parameters()) p.set_grad(nl::Tensor::full(p.shape(), 0.25, p.dtype(), p.device()));
    opt.step();
  };
  nl::manual_seed(3);
  nl::Linear host(3, 2);
  nl::manual_seed(3);
  nl::Linear dev(3, 2);
  dev.to(cuda);
  nl::AdamW ho(host.parameters()), dopt(dev.parameters());
  step(host, ho);
  step(dev, dopt);
  nl::TensorMap saved;
  const json st = dopt.save_state(saved);
  REQUIRE(saved.count("optimizer.g0.p0.exp_avg"));
  CHECK(saved.at("optimizer.g0.p0.exp_avg").device() == cuda);  // created where the parameter is
  nl::TensorMap on_host;  // what a checkpoint file gives back
  for (const auto& [k, v] : saved) on_host[k] = v.to(nl::Device::cpu());
  nl::AdamW resumed(dev.parameters());
  resumed.load_state(on_host, st);  // moved onto the parameters' device (a moment left on the host would throw below)
  step(dev, resumed);
  step(host, ho);
  CHECK(dev.weight.device() == cuda);
  const auto a = dev.weight.data().to_vector<double>(), b = host.weight.data().to_vector<double>();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-6));
}

TEST_CASE("device: a host batch fed to a model on cuda:0 is the ops' clear error", "[engine][device]") {
  nltest::FakeDevice fake;
  nltest::ToyTask t;
  json s = toy_settings(t);
  s["device"] = "cuda:0";
  nlapp::Trainer tr(t, s);
  auto batch = t.train_batch(0, 0);  // on the host: not moved
  CHECK_THROWS_WITH(tr.update({batch.get()}, 0), Contains("different devices") && Contains("cuda:0") &&
                                                     Contains("cpu") && Contains(".to(Device)"));
}

TEST_CASE("device: --distributed on a GPU device is refused before any rank starts", "[engine][device]") {
  nltest::FakeDevice fake;
  nltest::ToyTask t;
  json s = toy_settings(t);
  s["device"] = "cuda:0";
  s["distributed"] = true;
  CHECK_THROWS_WITH(nlapp::Trainer(t, s), Contains("--distributed trains on the cpu only") && Contains("--device cuda:0"));
}

TEST_CASE("device: resolved settings carry the run device - which is no part of the experiment", "[engine][device]") {
  nltest::FakeDevice fake;
  nltest::ToyTask t;
  CHECK(nlapp::resolve_task_settings(t, "", {})["device"] == "cpu");
  nlapp::set_run_device(nl::Device::cuda(0));  // what `normlab --device cuda:0` does
  const json s = nlapp::resolve_task_settings(t, "", {});
  nlapp::set_run_device(nl::Device::cpu());
  CHECK(s["device"] == "cuda:0");
  json other = s;
  other["device"] = "cpu";
  CHECK(nlapp::same_experiment(s, other));  // a finished cpu run is not redone on the GPU
  other["seed"] = 2;
  CHECK_FALSE(nlapp::same_experiment(s, other));
}

TEST_CASE("device: a NaN loss on cuda:0 stops the run at the next read, naming the updates, before any save",
          "[engine][device]") {
  // The losses stay on the device and are read once per log interval (and before validating or saving):
  // the loss turns NaN at update 6, the read after update 8 stops the run naming updates 5-8, and the
  // checkpoint of the end of the epoch (update 8) is never written.
  nltest::FakeDevice fake;
  nltest::ToyTask t;
  t.nan_at = 6;
  json s = toy_settings(t, "sgd");
  const fs::path out = tmp("nan");
  s["device"] = "cuda:0";
  s["out"] = out.string();
  s["quiet"] = true;
  s["log_interval"] = 4;
  s["save_interval_updates"] = 4;
  try {
    nlapp::Trainer(t, s).run();
    FAIL("no error");
  } catch (const nlapp::TrainingDiverged& e) {
    CHECK(e.update == 5);
    CHECK_THAT(std::string(e.what()), Contains("nan in updates 5-8") && Contains("--detect-anomaly"));
  }
  const nl::Checkpoint ck = nl::load_checkpoint(out / "checkpoint_last.safetensors");
  CHECK(ck.meta.at("state").at("updates") == 4);  // the last save before the NaN
  fs::remove_all(out);
}
