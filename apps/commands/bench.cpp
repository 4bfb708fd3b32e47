// `normlab bench <task>`: training-step time of a task's model (Trainer::update: forward, loss,
// backward, optimizer) on a synthetic batch of the training size, per thread count, with a kernel-time
// breakdown, side by side with PyTorch (bench/pytorch_<task>.py run by Debian's python3; on --device
// cuda the transformer twin runs on the GPU too, with --python naming an interpreter whose torch has CUDA).
// With --bf16 the normlab step runs under autocast, the PyTorch twin under torch.autocast(bfloat16), and
// normlab's float32 step is timed in the same rounds (a child process, so that each has its own peak RSS).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <unistd.h>
#include <sys/resource.h>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "autograd/functions.h"
#include "autograd/memory.h"
#include "backends/cpu/bf16_dot_rate.h"
#include "backends/cpu/cpu_features.h"
#include "backends/mixed_precision.h"
#include "backends/profiler.h"
#include "report/run_environment.h"
#include "engine/run_device.h"
#include "engine/task_cli.h"
#include "engine/task_registry.h"
#include "engine/trainer.h"
#include "report/atomic_file.h"
#include <filesystem>
#include "common/cli_common.h"
#include "common/command_registry.h"
#include "report/markdown_table.h"
#include "tensor/autocast.h"

namespace nlapp {
namespace {
using json = nlohmann::json;

struct BenchArgs {
  int steps = 0, warmup = -1, profile_steps = -1;  // 0 / -1: from the task (TaskInfo::bench_steps)
  int rounds = 0;  // normlab and PyTorch alternate this many times per thread count; 0: 3 (at most --steps)
  std::vector<int> threads{1, 2};
  bool pytorch = true;
  std::string python = "/usr/bin/python3";
  std::string json_out;
};

// Per-step wall and process-CPU times (ms) of one framework, in order, merged over the rounds.
struct Samples {
  std::vector<double> ms, cpu;
};

// {"median", "min", "max"} of step times in ms (the upper median for an even count).
json step_stats(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {{"median", ms[ms.size() / 2]}, {"min", ms.front()}, {"max", ms.back()}};
}

// Process CPU time in ms (all threads): on a loaded machine it moves less than wall time.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// Peak resident set size of this process so far, MiB (getrusage ru_maxrss, KiB on Linux), as
// bench/torch_bench.py's peak_rss_mib measures the PyTorch twin.
double peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

// normlab's side of one thread count: the trainer and its synthetic batch live across the rounds,
// so warm-up happens once; `time` adds timed updates (Trainer::update, the training loop's own step),
// `report` profiles a few more for the time shares.
class NormlabBench {
 public:
  NormlabBench(Task& task, json settings, int threads) : task_(task), threads_(threads) {
    settings["threads"] = threads;
    // The step schedule counts epochs in batches of the loaded data, which a bench does not load (its
    // batch is bench_batch's); the schedule does not change the cost of an update, so it is timed fixed.
    if (settings.value("lr_scheduler", "") == "step") {
      settings["lr_scheduler"] = "fixed";
      settings["lr_step_epochs"] = 0;
    }
    bf16_ = settings.value("bf16", false);
    trainer_ = std::make_unique<Trainer>(task, settings);
    batch_ = task.bench_batch(settings);
    dev_ = trainer_->device();
    to_device(*batch_, dev_);  // once: the step times the update, not the host-to-device copy
    micro_ = {batch_.get()};
  }
  void warm_up(int n) {
    for (int i = 0; i < n; ++i) step();
  }
  void time(int n, Samples& s) {
    for (int i = 0; i < n; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_ms();
      step();
      s.cpu.push_back(cpu_ms() - c0);
      s.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  // The result object of this thread count from the timed steps `s`; runs the profiled steps.
  json report(const BenchArgs& a, const Samples& s) {
    json t = step_stats(s.ms);
    t["all"] = s.ms;  // every step, so that a parent bench can merge the rounds of a child (--bf16)
    json cpu_t = step_stats(s.cpu);
    cpu_t["all"] = s.cpu;
    const double median = t["median"].get<double>();
    const double rss = peak_rss_mib();  // before the profiled pass, which allocates nothing new
    // What the graph keeps for backward after one forward (the training step's activation memory), by op.
    json held = json::object();
    {
      nl::AutocastGuard autocast(nl::DType::BFloat16, bf16_);
      nl::Variable loss = task_.loss(trainer_->model(), *batch_);
      for (const auto& [op, bytes] : nl::graph_held_bytes_by_op(loss)) held[op] = bytes / 1048576.0;
    }
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
    json op_shares = json::object();  // whole ops, overlapping the kernel categories above
    for (auto& [k, v] : nl::prof::op_totals())
      if (v > 0) op_shares[k] = 100.0 * v / wall;
    // Matrix-product FLOPs actually executed per step (forward + backward, counted by the backend),
    // and what they make per second of the median step.
    const double step_gflop = nl::prof::gemm_flops() / a.profile_steps / 1e9;
    const double gemm_s = nl::prof::totals()["gemm"];
    json kernel_list = json::array();  // every timed backend kernel, per step, largest first
    for (const auto& k : nl::prof::kernel_totals())
      kernel_list.push_back({{"kernel", k.name}, {"category", k.category}, {"ms_per_step", 1000.0 * k.seconds / a.profile_steps},
                         {"calls_per_step", (double)k.calls / a.profile_steps}});
    return {{"framework", "normlab"}, {"threads", threads_},
            {"items_per_step", batch_->items}, {"step_ms", t}, {"step_cpu_ms", cpu_t},
            {"step_gflop", step_gflop}, {"gflop_per_s", step_gflop / (median / 1000.0)},
            {"gemm_gflop_per_s", gemm_s > 0 ? nl::prof::gemm_flops() / 1e9 / gemm_s : 0.0},
            {"peak_rss_mib", rss}, {"graph_held_mib_by_op", held},
            {"items_per_s", (double)batch_->items / (median / 1000.0)}, {"time_share_percent", shares},
            {"op_share_percent", op_shares}, {"kernels", kernel_list}};
  }

 private:
  void step() {
    trainer_->update(micro_, u_++);
    if (!dev_.is_cpu()) nl::synchronize(dev_);  // the optimizer step's kernels too
  }
  Task& task_;
  int threads_;
  bool bf16_ = false;
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<TaskBatch> batch_;
  nl::Device dev_;
  std::vector<const TaskBatch*> micro_;
  int64_t u_ = 0;
};

// One run of the same model and step in PyTorch, `steps` timed steps after a.warmup untimed ones:
// bench/pytorch_<task>.py (absent: no reference for that task). Its JSON object, or {"error": why}.
json bench_pytorch(const Task& task, const json& settings, const BenchArgs& a, int threads, int steps) {
  // On a GPU the twin runs on the same device (--device cuda:N; only the transformer twin can, and only
  // where torch.cuda.is_available(): otherwise its error becomes "no reference").
  const std::string device = settings.value("device", std::string("cpu"));
  auto [name, args] = task.pytorch_bench(settings);
  if (device != "cpu") args += " --device " + device;
  if (settings.value("bf16", false)) args += " --bf16";  // torch.autocast(bfloat16) around forward and loss
  if (name.empty()) return {{"error", "no PyTorch twin for these settings"}};
  std::string script = std::string(NORMLAB_SOURCE_DIR) + "/bench/" + name;
  if (!std::filesystem::exists(script)) return {{"error", "no PyTorch reference script " + script}};
  std::string cmd = a.python + " " + script + " --json --threads " + std::to_string(threads) + " --steps " +
                    std::to_string(steps) + " --warmup " + std::to_string(a.warmup) + " " + args + " 2>&1";
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
  json r;
  try {
    r = json::parse(line);
  } catch (const std::exception& e) {
    return {{"error", std::string("could not parse PyTorch output: ") + e.what()}};
  }
  for (const char* k : {"step_ms", "step_cpu_ms"})
    if (!r.contains(k) || !r[k].contains("all") || !r[k]["all"].is_array() || r[k]["all"].empty())
      return {{"error", "PyTorch output has no per-step times (" + std::string(k) + ".all); is " + script +
                            " older than this normlab?"}};
  return r;
}

// normlab's float32 step on the same settings, `steps` timed steps after a.warmup, in a child process
// (`normlab bench <task> --config <settings> --no-pytorch`), so that its peak RSS is its own: the float32
// side of `bench --bf16`. Returns the child's normlab result object, or {"error": why}.
json bench_normlab_float32(const Task& task, json settings, const BenchArgs& a, int threads, int steps) {
  const std::string device = settings.value("device", std::string("cpu"));
  settings.erase("device");  // not a schema setting: the global --device
  settings["bf16"] = false;
  const std::string base = "/tmp/normlab-bench-f32-" + std::to_string(getpid());
  const std::string cfg = base + ".json", out = base + "-out.json";
  write_file_atomic(cfg, settings.dump() + "\n");
  char exe[4096] = {0};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return {{"error", "cannot find the normlab binary (/proc/self/exe)"}};
  const std::string cmd = std::string(exe) + " --device " + device + " bench " + task.info().name + " --config " + cfg +
                          " --no-pytorch --rounds 1 --profile-steps 1 --threads " + std::to_string(threads) +
                          " --steps " + std::to_string(steps) + " --warmup " + std::to_string(a.warmup) + " --json " +
                          out + " > " + base + ".log 2>&1";
  const int rc = std::system(cmd.c_str());
  json r;
  std::ifstream in(out);
  if (rc == 0 && in) r = json::parse(in, nullptr, false);
  std::string log;
  if (std::ifstream l(base + ".log"); l) log.assign(std::istreambuf_iterator<char>(l), {});
  for (const std::string& f : {cfg, out, base + ".log"}) std::remove(f.c_str());
  if (rc != 0 || !r.is_object() || !r.contains("runs") || r["runs"].empty())
    return {{"error", "normlab float32 run failed (" + log.substr(0, 300) + ")"}};
  return r["runs"][0]["normlab"];
}

// The core's clock in GHz, measured: a chain of dependent integer adds retires one add per cycle on every
// x86 core, so adds per second is the running clock (boost included, which /proc/cpuinfo's nominal "cpu MHz"
// is not: 2.60 there against 3.66 measured on the Zen 4 development machine). The best of 5 runs of ~40 ms,
// so a run that lost the core to another process does not count. 0 on other architectures.
double measured_clock_ghz() {
#if defined(__x86_64__)
  double best = 0;
  for (int t = 0; t < 5; ++t) {
    uint64_t x = 0;
    const int64_t n = 20'000'000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; ++i)
      asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                   "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                   : "+r"(x));
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 8.0 * (double)n / sec / 1e9);
  }
  return best;
#else
  return 0;
#endif
}

// The peak per core in GFLOP/s of the instruction the bfloat16 step's products run on, and what it is: with
// products native, AMX-BF16's 1024 FLOP a cycle times the measured clock (measured_clock_ghz; /proc/cpuinfo's
// nominal clock where it cannot be measured), or vdpbf16ps's measured rate (cpu/bf16_dot_rate.h: 12
// independent chains; 1 instruction a cycle on Zen 4, 0.5 on Emerald Rapids); with products in float32
// (cpu_bf16_products_native() false) the measured float32 FMA rate. 0 when unknown.
double bf16_step_peak_gflops_per_core(std::string* how) {
  const auto& f = nl::cpu::cpu_features();
  const nl::cpu::Bf16DotRate& r = nl::cpu::bf16_dot_rate();
  char b[240];
  if (!nl::cpu_bf16_products_native()) {
    if (r.fma_gflops <= 0) return 0;
    std::snprintf(b, sizeof b, "products in float32 here; float32 FMA %.0f GFLOP/s a core, measured", r.fma_gflops);
    *how = b;
    return r.fma_gflops;
  }
  if (!f.amx_bf16) {
    std::snprintf(b, sizeof b, "vdpbf16ps %.0f GFLOP/s a core, measured", r.bf16_gflops);
    *how = b;
    return r.bf16_gflops;
  }
  double mhz = 0;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line) && mhz == 0;)
    if (line.rfind("cpu MHz", 0) == 0) mhz = std::atof(line.substr(line.find(':') + 1).c_str());
  const double measured = measured_clock_ghz();
  const double ghz = measured > 0 ? measured : mhz / 1000.0;
  if (ghz <= 0) return 0;
  std::snprintf(b, sizeof b, "1024 FLOP/cycle (AMX-BF16) x %.2f GHz (%s)", ghz,
                measured > 0 ? "measured by a chain of dependent adds" : "/proc/cpuinfo, nominal");
  *how = b;
  return 1024 * ghz;
}

// The PyTorch result of all rounds as one: the first round's object with the step statistics, rates
// and peak RSS recomputed over every round's steps (peak RSS: the largest of the processes).
json merge_pytorch_rounds(const std::vector<json>& runs) {
  json m = runs.front();
  Samples s;
  double rss = 0;
  for (const json& r : runs) {
    for (const auto& v : r["step_ms"]["all"]) s.ms.push_back(v.get<double>());
    for (const auto& v : r["step_cpu_ms"]["all"]) s.cpu.push_back(v.get<double>());
    rss = std::max(rss, r.value("peak_rss_mib", 0.0));
  }
  m["step_ms"] = step_stats(s.ms);
  m["step_ms"]["all"] = s.ms;
  m["step_cpu_ms"] = step_stats(s.cpu);
  m["step_cpu_ms"]["all"] = s.cpu;
  m["steps"] = s.ms.size();
  m["peak_rss_mib"] = rss;
  // Rates per second of the median step, rescaled from the first round's median to the merged one.
  const double scale = runs.front()["step_ms"]["median"].get<double>() / m["step_ms"]["median"].get<double>();
  for (const char* k : {"items_per_s", "images_per_s", "gflop_per_s"})
    if (m.contains(k) && m[k].is_number()) m[k] = m[k].get<double>() * scale;
  m["rounds"] = runs.size();
  return m;
}

// Median of the step times of [begin, end) of `v`.
double median_of(const std::vector<double>& v, size_t begin, size_t end) {
  return step_stats(std::vector<double>(v.begin() + begin, v.begin() + end))["median"].get<double>();
}

std::string f2(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

void run(TaskInvocation& inv, const BenchArgs& args) {
  Task& task = *inv.task;
  BenchArgs a = args;
  // An interpreter that cannot be run is a bad --python, not a missing PyTorch: stop before timing.
  if (a.pytorch) check_python_interpreter(a.python);
  if (a.steps == 0) a.steps = task.info().bench_steps;
  if (a.warmup < 0) a.warmup = std::max(1, a.steps / 10);
  if (a.profile_steps < 0) a.profile_steps = std::max(1, a.steps / 3);
  if (a.rounds == 0) a.rounds = a.pytorch ? std::min(3, a.steps) : 1;  // alternation needs a second framework
  if (a.rounds > a.steps)
    throw std::invalid_argument("--rounds " + std::to_string(a.rounds) + " is more than the " + std::to_string(a.steps) +
                                " timed steps: every round times at least one step; lower --rounds or raise --steps");
  int64_t n_items = 0;
  const json& settings = inv.settings;
  const bool bf16 = settings.value("bf16", false);
  const std::string unit = task.info().unit;
  json report = {{"task", task.info().name}, {"model", task.info().description}, {"settings", settings},
                 {"runs", json::array()}};
  std::vector<std::vector<std::string>> rows, rows_bf16;
  for (int t : a.threads) {
    // Alternate: round r times normlab's share of the steps, then PyTorch's (a fresh process, with its
    // own warm-up), so that both frameworks are timed in the same phases of a noisy machine.
    std::cout << "normlab, " << t << " thread(s): " << a.warmup << " warm-up + " << a.steps << " timed steps"
              << (a.rounds > 1 ? " in " + std::to_string(a.rounds) + " rounds" + (a.pytorch ? " alternating with PyTorch" : "")
                               : "")
              << " ...\n" << std::flush;
    NormlabBench nb(task, settings, t);
    nb.warm_up(a.warmup);
    Samples ns;
    std::vector<json> py_runs, f32_runs;
    json py = json::object(), f32 = json::object();
    json round_log = json::array();
    for (int r = 0; r < a.rounds; ++r) {
      const int k = a.steps / a.rounds + (r < a.steps % a.rounds ? 1 : 0);
      const size_t n0 = ns.ms.size();
      nb.time(k, ns);
      json entry = {{"round", r + 1}, {"steps", k}, {"normlab_median_ms", median_of(ns.ms, n0, ns.ms.size())}};
      std::cout << "  " << (a.rounds > 1 ? "round " + std::to_string(r + 1) + ": " : "") << "normlab"
                << (bf16 ? " bf16" : "") << " median " << f2(entry["normlab_median_ms"]) << " ms" << std::flush;
      if (bf16 && !f32.contains("error")) {  // normlab float32 in the same round (a child process)
        json one = bench_normlab_float32(task, settings, a, t, k);
        if (one.contains("error")) {
          f32 = one;
          std::cout << ", normlab float32: " << f32["error"].get<std::string>();
        } else {
          f32_runs.push_back(one);
          entry["normlab_float32_median_ms"] = one["step_ms"]["median"];
          std::cout << ", normlab float32 median " << f2(entry["normlab_float32_median_ms"]) << " ms" << std::flush;
        }
      }
      if (a.pytorch && !py.contains("error")) {  // after an error, the later rounds time normlab only
        json one = bench_pytorch(task, settings, a, t, k);
        if (one.contains("error")) {
          py = one;
          std::cout << ", PyTorch: " << py["error"].get<std::string>();
        } else {
          py_runs.push_back(one);
          entry["pytorch_median_ms"] = one["step_ms"]["median"];
          entry["time_ratio"] = entry["normlab_median_ms"].get<double>() / one["step_ms"]["median"].get<double>();
          std::cout << ", PyTorch median " << f2(entry["pytorch_median_ms"]) << " ms (ratio "
                    << f2(entry["time_ratio"]) << "×)";
        }
      }
      std::cout << "\n";
      round_log.push_back(entry);
    }
    if (a.pytorch && !py.contains("error")) py = merge_pytorch_rounds(py_runs);
    if (bf16 && !f32.contains("error")) f32 = merge_pytorch_rounds(f32_runs);  // the same merge: step lists, max RSS
    json n = nb.report(a, ns);
    n_items = n["items_per_step"].get<int64_t>();
    auto ms = [](const json& j) {
      return f2(j["step_ms"]["median"]) + " (" + f2(j["step_ms"]["min"]) + "–" + f2(j["step_ms"]["max"]) + ")";
    };
    bool have_py = a.pytorch && !py.contains("error");
    auto med = [](const json& j, const char* k) {
      return j.contains(k) ? j[k]["median"].get<double>() : std::nan("");
    };
    auto ratio = [&](double x, double y) { return std::isnan(x) || std::isnan(y) ? std::string("—") : f2(x / y) + "×"; };
    auto num = [&](const json& j, const char* k, int prec) {
      if (!j.contains(k)) return std::string("—");
      char b[32];
      std::snprintf(b, sizeof b, "%.*f", prec, j[k].get<double>());
      return std::string(b);
    };
    const json none = json::object();
    const json& p = have_py ? py : none;
    rows.push_back({std::to_string(t), ms(n), have_py ? ms(py) : "—",
                    ratio(med(n, "step_ms"), med(p, "step_ms")), ratio(med(n, "step_cpu_ms"), med(p, "step_cpu_ms")),
                    num(n, "items_per_s", 0) + " / " + num(p, "items_per_s", 0),
                    num(n, "gflop_per_s", 1) + " / " + num(p, "gflop_per_s", 1),
                    num(n, "peak_rss_mib", 0) + " / " + num(p, "peak_rss_mib", 0)});
    if (bf16) {
      const json& f = f32.contains("error") ? none : f32;
      rows_bf16.push_back({std::to_string(t), ms(n), f.contains("step_ms") ? ms(f) : "—",
                           ratio(med(f, "step_ms"), med(n, "step_ms")), ratio(med(n, "step_ms"), med(p, "step_ms")),
                           num(n, "peak_rss_mib", 0) + " / " + num(f, "peak_rss_mib", 0)});
    }
    report["runs"].push_back({{"threads", t}, {"normlab", n}, {"pytorch", py}, {"rounds", round_log}});
    if (bf16) report["runs"].back()["normlab_float32"] = f32;
  }
  std::cout << "\n" << task.info().description << ", training step (forward, loss, backward, optimizer), "
            << n_items << " " << unit << " per step, norm " << settings["norm"].get<std::string>()
            << " (median over " << a.steps << " steps after " << a.warmup << " warm-up"
            << (a.rounds > 1 ? ", in " + std::to_string(a.rounds) + (a.pytorch ? " alternating rounds" : " rounds") : "")
            << "; min–max in brackets)\n\n"
            << markdown_table({"threads", "normlab ms/step", "PyTorch ms/step", "time ratio", "CPU-time ratio",
                               unit + "/s normlab / PyTorch", "GFLOP/s normlab / PyTorch", "peak RSS MiB normlab / PyTorch"},
                              rows)
            << "\n(ratios: normlab / PyTorch, below 1 = normlab faster; CPU time = process CPU time per step, steadier "
               "than wall time on a loaded machine; normlab's GFLOP/s counts the matrix-product FLOPs it executed, "
               "PyTorch's is 3x its forward matmul FLOPs; peak RSS of each process after its timed steps)\n"
            << "\n";
  if (bf16)
    std::cout << "mixed precision (--bf16): normlab bfloat16 against normlab float32 of the same rounds, and "
                 "PyTorch under torch.autocast(bfloat16) (the PyTorch column above)\n\n"
              << markdown_table({"threads", "normlab bf16 ms/step", "normlab float32 ms/step", "bf16 speed-up",
                                 "bf16 / PyTorch autocast", "peak RSS MiB bf16 / float32"},
                                rows_bf16)
              << "\n(speed-up: float32 / bf16 step time, above 1 = bf16 faster; the float32 step ran in a child "
                 "process, so each peak RSS is its own)\n\n";
  std::string peak_how;
  const double peak = bf16 ? bf16_step_peak_gflops_per_core(&peak_how) : 0.0;
  for (auto& r : report["runs"]) {
    std::cout << "time share, normlab, " << r["threads"] << " thread(s), " << a.profile_steps << " profiled steps:\n";
    std::vector<std::pair<double, std::string>> sh;
    for (auto& [k, v] : r["normlab"]["time_share_percent"].items()) sh.push_back({v.get<double>(), k});
    std::sort(sh.rbegin(), sh.rend());
    for (auto& [v, k] : sh) std::printf("  %-30s %5.1f%%\n", k.c_str(), v);
    const json& nr = r["normlab"];
    for (auto& [k, v] : nr["op_share_percent"].items())
      std::printf("  %-30s %5.1f%% (the whole op, its kernels counted in the lines above too)\n", (k + " op").c_str(),
                  v.get<double>());
    if (nr.contains("kernels") && !nr["kernels"].empty()) {
      std::printf("  kernels, largest first (ms and calls per step):");
      const size_t shown = std::min<size_t>(nr["kernels"].size(), 12);
      for (size_t i = 0; i < shown; ++i) {
        const json& k = nr["kernels"][i];
        std::printf("%s %s %.2f (%g)", i ? "," : "", k["kernel"].get<std::string>().c_str(),
                    k["ms_per_step"].get<double>(), k["calls_per_step"].get<double>());
      }
      std::printf("%s\n", nr["kernels"].size() > shown ? ", ..." : "");
    }
    const double gemm_rate = nr["gemm_gflop_per_s"].get<double>();
    std::printf("  matrix products: %.1f GFLOP per step at %.1f GFLOP/s inside the GEMM calls (%.0f ms per step)\n",
                nr["step_gflop"].get<double>(), gemm_rate,
                gemm_rate > 0 ? 1000.0 * nr["step_gflop"].get<double>() / gemm_rate : 0.0);
    if (bf16 && peak > 0)
      std::printf("  products at %.0f%% of their instruction's peak, %.0f GFLOP/s for %d thread(s) (%s)\n",
                  100.0 * gemm_rate / (peak * r["threads"].get<int>()), peak * r["threads"].get<int>(),
                  r["threads"].get<int>(), peak_how.c_str());
    else if (bf16)
      std::printf("  bfloat16 peak of this CPU unknown (%s)\n", nl::cpu_bf16_info().c_str());
    std::vector<std::pair<double, std::string>> held;
    double total = 0;
    for (auto& [k, v] : nr["graph_held_mib_by_op"].items()) held.push_back({v.get<double>(), k}), total += v.get<double>();
    std::sort(held.rbegin(), held.rend());
    std::printf("  kept for backward after one forward: %.0f MiB (parameters included); by op:", total);
    for (size_t i = 0; i < held.size() && i < 8; ++i) std::printf("%s %s %.0f", i ? "," : "", held[i].second.c_str(), held[i].first);
    std::printf(" MiB\n");
  }
  if (!a.json_out.empty()) {
    // The machine and build the numbers came from (commit, CPU model and flags, the GPU), as in results.json.
    report["environment"] = run_environment(a.threads.empty() ? 1 : a.threads.front(), run_device());
    if (bf16) report["environment"]["bf16"] = nl::cpu_bf16_info();  // which path the products took, and why
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
    m->add_option("--rounds", a->rounds,
                  "Alternate normlab and PyTorch this many times per thread count, splitting --steps between "
                  "the rounds, so both are timed in the same phases of a noisy machine (default 3, or --steps if fewer; "
                  "1 with --no-pytorch) [1 to --steps]")
        ->check(positive);
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

  // `normlab bench transformer --config small|iwslt|cls`: the Transformer shapes by the names the MT
  // issue gives them, mapped onto the task configs that hold those shapes.
  static const std::map<std::string, std::pair<std::string, std::string>> shapes = {
      {"small", {"mt", "multi30k"}}, {"iwslt", {"mt", "iwslt14-de-en"}}, {"cls", {"cls", "sst5"}}};
  auto* tr = b->add_subcommand("transformer",
                               "Transformer step on 128 x 32 synthetic tokens: --config small (= mt --config multi30k), "
                               "iwslt (= mt --config iwslt14-de-en) or cls (= cls --config sst5)");
  auto shape = std::make_shared<std::string>("small");
  tr->add_option("--config", *shape, "small | iwslt | cls")
      ->capture_default_str()
      ->check(CLI::IsMember({"small", "iwslt", "cls"}));
  verb.extra_flags(tr);
  auto precision = std::make_shared<std::map<std::string, std::string>>();
  tr->add_flag_function(
      "--bf16", [precision](int64_t) { (*precision)["bf16"] = "true"; },
      "Mixed precision: normlab under autocast and PyTorch under torch.autocast(bfloat16), with normlab float32 "
      "timed in the same rounds");
  tr->add_flag_function(
      "--tf32", [precision](int64_t) { (*precision)["tf32"] = "true"; }, "Let float32 products on a GPU use TF32");
  tr->callback([a, shape, precision] {
    const auto& [task_name, config] = shapes.at(*shape);
    TaskInvocation inv;
    inv.task = make_task(task_name);
    inv.settings = resolve_task_settings(*inv.task, config, *precision, &inv.config_source);
    run(inv, *a);
  });
}

CommandRegistrar reg{{"bench", 30, setup}};
}  // namespace
}  // namespace nlapp
