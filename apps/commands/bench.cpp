// `normlab bench <task>`: training-step time of a task's model (Trainer::update: forward, loss,
// backward, optimizer) on a synthetic batch of the training size, per thread count, with a kernel-time
// breakdown, side by side with PyTorch on CPU (bench/pytorch_<task>.py run by Debian's python3).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <numeric>

#include <nlohmann/json.hpp>

#include "autograd/functions.h"
#include "backends/profiler.h"
#include "report/atomic_file.h"
#include "engine/task_cli.h"
#include "engine/trainer.h"
#include <filesystem>
#include "common/command_registry.h"
#include "report/markdown_table.h"

namespace nlapp {
namespace {
using json = nlohmann::json;

struct BenchArgs {
  int steps = 0, warmup = -1, profile_steps = -1;  // 0 / -1: from the task (TaskInfo::bench_steps)
  std::vector<int> threads{1, 2};
  bool pytorch = true;
  std::string python = "/usr/bin/python3";
  std::string json_out;
};

struct Timing {
  double median = 0, min = 0, max = 0;
};

Timing summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

// One thread count: timed updates (Trainer::update, the training loop's own step), then a profiled
// pass for the time shares.
json bench_normlab(Task& task, json settings, const BenchArgs& a, int threads) {
  settings["threads"] = threads;
  Trainer trainer(task, settings);
  std::unique_ptr<TaskBatch> batch = task.bench_batch(settings);
  std::vector<const TaskBatch*> micro{batch.get()};
  int64_t u = 0;
  auto step = [&] { trainer.update(micro, u++); };
  for (int i = 0; i < a.warmup; ++i) step();
  std::vector<double> ms;
  for (int i = 0; i < a.steps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  Timing t = summarize(ms);
  nl::prof::reset();
  nl::prof::enable(true);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < a.profile_steps; ++i) step();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nl::prof::enable(false);
  json shares = json::object();
  double kernels = 0;
  for (auto& [k, v] : nl::prof::totals()) {
    if (v <= 0) continue;
    shares[k] = 100.0 * v / wall;
    kernels += v;
  }
  shares["autograd + allocation + other"] = 100.0 * std::max(0.0, wall - kernels) / wall;
  return {{"framework", "normlab"}, {"threads", threads}, {"items_per_step", batch->items},
          {"step_ms", {{"median", t.median}, {"min", t.min}, {"max", t.max}}},
          {"items_per_s", (double)batch->items / (t.median / 1000.0)}, {"time_share_percent", shares}};
}

// The same model and step in PyTorch: bench/pytorch_<task>.py (absent: no reference for that task).
json bench_pytorch(const Task& task, const json& settings, const BenchArgs& a, int threads) {
  auto [name, args] = task.pytorch_bench(settings);
  if (name.empty()) return {{"error", "no PyTorch twin for these settings"}};
  std::string script = std::string(NORMLAB_SOURCE_DIR) + "/bench/" + name;
  if (!std::filesystem::exists(script)) return {{"error", "no PyTorch reference script " + script}};
  std::string cmd = a.python + " " + script + " --json --threads " + std::to_string(threads) + " --steps " +
                    std::to_string(a.steps) + " --warmup " + std::to_string(a.warmup) + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p) return {{"error", "could not start " + a.python}};
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p.get())) out.append(buf, n);
  int rc = pclose(p.release());
  auto brace = out.rfind("\n{");
  std::string line = brace == std::string::npos ? out : out.substr(brace + 1);
  if (rc != 0 || line.empty() || line[0] != '{')
    return {{"error", "PyTorch reference unavailable (" + out.substr(0, 200) +
                          "); install it with: scripts/install-deps.sh --bench"}};
  try {
    return json::parse(line);
  } catch (const std::exception& e) {
    return {{"error", std::string("could not parse PyTorch output: ") + e.what()}};
  }
}

std::string f2(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

void run(TaskInvocation& inv, const BenchArgs& args) {
  Task& task = *inv.task;
  BenchArgs a = args;
  if (a.steps == 0) a.steps = task.info().bench_steps;
  if (a.warmup < 0) a.warmup = std::max(1, a.steps / 10);
  if (a.profile_steps < 0) a.profile_steps = std::max(1, a.steps / 3);
  int64_t n_items = 0;
  const json& settings = inv.settings;
  const std::string unit = task.info().unit;
  json report = {{"task", task.info().name}, {"model", task.info().description}, {"settings", settings},
                 {"runs", json::array()}};
  std::vector<std::vector<std::string>> rows;
  for (int t : a.threads) {
    std::cout << "normlab, " << t << " thread(s): " << a.warmup << " warm-up + " << a.steps << " timed steps ..." << std::flush;
    json n = bench_normlab(task, settings, a, t);
    n_items = n["items_per_step"].get<int64_t>();
    std::cout << " median " << f2(n["step_ms"]["median"]) << " ms\n";
    json py = json::object();
    if (a.pytorch) {
      std::cout << "PyTorch, " << t << " thread(s) ..." << std::flush;
      py = bench_pytorch(task, settings, a, t);
      std::cout << (py.contains("error") ? std::string(" ") + py["error"].get<std::string>()
                                         : " median " + f2(py["step_ms"]["median"]) + " ms")
                << "\n";
    }
    auto ms = [](const json& j) {
      return f2(j["step_ms"]["median"]) + " (" + f2(j["step_ms"]["min"]) + "–" + f2(j["step_ms"]["max"]) + ")";
    };
    bool have_py = a.pytorch && !py.contains("error");
    rows.push_back({std::to_string(t), ms(n), std::to_string((int64_t)n["items_per_s"].get<double>()),
                    have_py ? ms(py) : "—",
                    have_py ? std::to_string((int64_t)py["items_per_s"].get<double>()) : "—",
                    have_py ? f2(n["step_ms"]["median"].get<double>() / py["step_ms"]["median"].get<double>()) + "×" : "—"});
    report["runs"].push_back({{"threads", t}, {"normlab", n}, {"pytorch", py}});
  }
  std::cout << "\n" << task.info().description << ", training step (forward, loss, backward, optimizer), "
            << n_items << " " << unit << " per step, norm " << settings["norm"].get<std::string>()
            << " (median over " << a.steps << " steps after " << a.warmup << " warm-up; min–max in brackets)\n\n"
            << markdown_table({"threads", "normlab ms/step", "normlab " + unit + "/s", "PyTorch ms/step", "PyTorch " + unit + "/s",
                               "normlab / PyTorch time"},
                              rows)
            << "\n";
  for (auto& r : report["runs"]) {
    std::cout << "time share, normlab, " << r["threads"] << " thread(s), " << a.profile_steps << " profiled steps:\n";
    std::vector<std::pair<double, std::string>> sh;
    for (auto& [k, v] : r["normlab"]["time_share_percent"].items()) sh.push_back({v.get<double>(), k});
    std::sort(sh.rbegin(), sh.rend());
    for (auto& [v, k] : sh) std::printf("  %-30s %5.1f%%\n", k.c_str(), v);
  }
  if (!a.json_out.empty()) {
    write_file_atomic(a.json_out, report.dump(2) + "\n");
    std::cout << "written: " << a.json_out << "\n";
  }
}

void setup(CLI::App& app) {
  auto* b = app.add_subcommand("bench", "Time a task's training step against PyTorch on CPU");
  auto a = std::make_shared<BenchArgs>();
  TaskVerb verb;
  verb.skip = {"threads", "resume", "out", "no_save", "quiet"};
  verb.extra_flags = [a](CLI::App* m) {
    auto positive = CLI::Range(1, 1000000).description("");
    m->add_option("--steps", a->steps, "Timed steps (default: the task's; 300 for mnist, 10 for mt) [1 to 1000000]")->check(positive);
    m->add_option("--warmup", a->warmup, "Untimed warm-up steps (default: a tenth of --steps, at least 1) [0 to 1000000]")
        ->check(CLI::Range(0, 1000000).description(""));
    m->add_option("--profile-steps", a->profile_steps, "Steps profiled for the time shares (default: a third of --steps) [1 to 1000000]")
        ->check(positive);
    m->add_option("--threads", a->threads, "Thread counts to measure, e.g. 1,2 [each from 1 to 256]")
        ->delimiter(',')
        ->capture_default_str()
        ->check(CLI::Range(1, 256).description(""));
    m->add_flag("!--no-pytorch", a->pytorch, "Skip the PyTorch reference");
    m->add_option("--python", a->python, "Interpreter with python3-torch (Debian's own)")->capture_default_str();
    m->add_option("--json", a->json_out, "Also write the results as JSON to this file");
  };
  verb.run = [a](TaskInvocation& inv) { run(inv, *a); };
  add_task_subcommands(b, verb);
}

CommandRegistrar reg{{"bench", 30, setup}};
}  // namespace
}  // namespace nlapp
