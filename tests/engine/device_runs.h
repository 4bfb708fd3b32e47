#pragma once
// Runs of the one Trainer on the cpu and on "cuda:0" (FakeDevice: the core-only test backend in the CUDA
// slot, host memory, composite fused kernels), and the cross-device resume check shared by the trainer
// tests (toy task) and the task tests (mnist, mt, cls, lm).
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "backends/core_only_backend.h"
#include "engine/run_device.h"
#include "engine/trainer.h"
#include "report/metrics_log.h"

namespace nltest {

/// The training losses of metrics.jsonl in `out` (one per update when log_interval is 1).
inline std::vector<double> logged_losses(const std::filesystem::path& out) {
  std::vector<double> v;
  for (const auto& l : nlapp::read_metrics_log(out / "metrics.jsonl"))
    if (l.contains("train_loss")) v.push_back(l["train_loss"].get<double>());
  return v;
}

/// Trains `task` (set up) with `settings` on `device` ("cpu" or "cuda:0") to `max_update` updates in
/// `out` (resuming what is there), logging every loss. Checks that every parameter and buffer of the
/// model lives on `device` afterwards. Returns the results. For "cuda:0" the caller holds a FakeDevice
/// that outlives the task (a task may keep device tensors, e.g. the lm memory).
inline nlapp::RunResult device_run(nlapp::Task& task, nlohmann::json settings, const std::string& device,
                                   int64_t max_update, const std::filesystem::path& out) {
  settings["device"] = device;
  settings["out"] = out.string();
  settings["max_update"] = max_update;
  settings["resume"] = true;
  settings["log_interval"] = 1;
  settings["quiet"] = true;
  nlapp::Trainer trainer(task, settings);
  nlapp::RunResult r = trainer.run();
  INFO("device " << device);
  CHECK(trainer.device().str() == device);
  for (const auto& [name, p] : trainer.model().named_parameters()) {
    INFO(name);
    CHECK(p.device().str() == device);
  }
  for (const auto& [name, b] : trainer.model().named_buffers()) {
    INFO(name);
    if (b.defined()) CHECK(b.device().str() == device);
  }
  return r;
}

/// |a - b| <= tol * max(1, |b|) for every pair, same lengths.
inline void check_close(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("update " << i + 1 << ": " << a[i] << " vs " << b[i]);
    CHECK(std::isfinite(a[i]));
    CHECK(std::abs(a[i] - b[i]) <= tol * std::max(1.0, std::abs(b[i])));
  }
}

/// The cross-device check of one task: `half` updates then a resume to 2·half, as
///   A: cpu, resumed on the cpu;   B: cuda:0, resumed on the cpu;   C: cpu, resumed on cuda:0.
/// B's and C's losses (the fake device's first updates, and the continuation after a checkpoint
/// written on one device and loaded on the other, optimizer moments included) match A's to `tol`;
/// so does the validation metric of the end of the run. Returns A's losses. The caller holds a
/// FakeDevice declared before the task.
inline std::vector<double> check_cross_device_resume(nlapp::Task& task, const nlohmann::json& settings,
                                                     const std::filesystem::path& dir, int64_t half, double tol) {
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  device_run(task, settings, "cpu", half, dir / "A");
  fs::copy(dir / "A", dir / "C", fs::copy_options::recursive);
  const nlapp::RunResult a = device_run(task, settings, "cpu", 2 * half, dir / "A");
  device_run(task, settings, "cuda:0", half, dir / "B");
  const nlapp::RunResult b = device_run(task, settings, "cpu", 2 * half, dir / "B");
  const nlapp::RunResult c = device_run(task, settings, "cuda:0", 2 * half, dir / "C");
  const std::vector<double> la = logged_losses(dir / "A");
  REQUIRE(la.size() == (size_t)(2 * half));
  {
    INFO("B: written on cuda:0, resumed on the cpu");
    check_close(logged_losses(dir / "B"), la, tol);
    check_close({b.best_valid}, {a.best_valid}, tol);
  }
  {
    INFO("C: written on the cpu, resumed on cuda:0");
    check_close(logged_losses(dir / "C"), la, tol);
    check_close({c.best_valid}, {a.best_valid}, tol);
  }
  CHECK(b.updates == 2 * half);
  CHECK(c.updates == 2 * half);
  return la;
}

/// A training step on a device never waits for the host (docs/architecture.md): runs `warm` updates of
/// `task` with `settings` on the fake cuda:0, then `measured` more, and checks that these copy nothing
/// between host and device — their batches were moved up beforehand, as the trainer's data loading does
/// between steps — and that reading the losses of the interval is the one copy back. The caller's
/// `fake` must outlive the task.
inline void check_steady_state_transfers(nlapp::Task& task, nlohmann::json settings, FakeDevice& fake,
                                         const std::filesystem::path& out, int64_t warm = 2, int64_t measured = 2) {
  settings["device"] = "cuda:0";
  settings["out"] = out.string();
  settings["quiet"] = true;
  settings["no_save"] = true;
  nlapp::Trainer trainer(task, settings);
  const int64_t k = settings.value("update_freq", (int64_t)1), n = task.epoch_size(0);
  std::vector<std::unique_ptr<nlapp::TaskBatch>> own;
  std::vector<std::vector<const nlapp::TaskBatch*>> updates((size_t)(warm + measured));
  for (int64_t u = 0; u < warm + measured; ++u)
    for (int64_t j = 0; j < k; ++j) {
      own.push_back(task.train_batch(0, (uint64_t)((u * k + j) % n)));
      nlapp::to_device(*own.back(), trainer.device());
      updates[(size_t)u].push_back(own.back().get());
    }
  for (int64_t u = 0; u < warm; ++u) trainer.update(updates[(size_t)u], u);
  fake.backend.to_host = fake.backend.from_host = 0;
  nl::Tensor sum = nl::Tensor::zeros({}, nl::DType::Float64, trainer.device());
  for (int64_t u = warm; u < warm + measured; ++u) sum = nl::add(sum, trainer.update(updates[(size_t)u], u));
  INFO("copies in " << measured << " steady-state updates: " << fake.backend.to_host << " to the host, "
                    << fake.backend.from_host << " from the host");
  CHECK(fake.backend.to_host == 0);
  CHECK(fake.backend.from_host == 0);
  CHECK(std::isfinite(sum.item()));  // the log interval's one read
  CHECK(fake.backend.to_host == 1);
}

}  // namespace nltest
