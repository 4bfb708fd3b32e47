// normlab_bench_attention: the fused attention op (nl::attention) against its composite twin
// (nl::attention_composite) on one shape. For each: the median over --reps timed passes (after one
// warm-up) of forward and backward time, as wall time (*_ms) and as CPU time of the calling thread
// (*_cpu_ms: with --threads 1 all work runs on it, and a busy shared machine inflates it far less than
// wall time), and graph_held_bytes(out) (autograd/memory.h): what the attention graph keeps for
// backward. Backward starts from loss = sum(out * w), w fixed and random; q, k, v require grad.
// Prints one JSON object. Default shape: the "small" Transformer of issue 8 (B=128, H=4, T=32, dh=64).
// Usage: normlab_bench_attention [--batch 128] [--heads 4] [--tq 32] [--tk 32] [--dh 64] [--threads 1]
//        [--reps 20] [--causal] [--dropout 0] [--float64]
#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "autograd/functions.h"
#include "autograd/memory.h"
#include "backends/runtime.h"

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}
using AttnFn = nl::Variable (*)(const nl::Variable&, const nl::Variable&, const nl::Variable&,
                                const nl::AttentionOptions&);

// Times `reps` forward + backward passes of `f`; returns the medians and graph_held_bytes as JSON.
nlohmann::json measure(AttnFn f, const nl::Tensor& q, const nl::Tensor& k, const nl::Tensor& v, const nl::Tensor& w,
                       const nl::AttentionOptions& o, int reps) {
  std::vector<double> fwd, bwd, fwd_cpu, bwd_cpu;
  size_t held = 0;
  for (int r = 0; r <= reps; ++r) {  // pass 0 warms the allocator cache and BLAS
    nl::Variable vq(q, true), vk(k, true), vv(v, true);
    auto t0 = Clock::now();
    double c0 = thread_cpu_ms();
    nl::Variable out = f(vq, vk, vv, o);
    const double tf = ms_since(t0), cf = thread_cpu_ms() - c0;
    held = nl::graph_held_bytes(out);
    nl::Variable loss = nl::sum(out * nl::Variable(w));
    out = nl::Variable();
    t0 = Clock::now();
    c0 = thread_cpu_ms();
    loss.backward();
    const double tb = ms_since(t0), cb = thread_cpu_ms() - c0;
    if (r) fwd.push_back(tf), bwd.push_back(tb), fwd_cpu.push_back(cf), bwd_cpu.push_back(cb);
  }
  const double mib = 1024.0 * 1024.0;
  return {{"forward_ms", median(fwd)},         {"backward_ms", median(bwd)},
          {"forward_cpu_ms", median(fwd_cpu)}, {"backward_cpu_ms", median(bwd_cpu)},
          {"total_cpu_ms", median(fwd_cpu) + median(bwd_cpu)},
          {"graph_held_bytes", held},          {"graph_held_mib", held / mib}};
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Fused vs composite scaled-dot-product attention: time and graph-held bytes"};
  int64_t B = 128, H = 4, Tq = 32, Tk = 32, dh = 64;
  int threads = 1, reps = 20;
  bool causal = false, f64 = false;
  double dropout = 0.0;
  app.add_option("--batch", B, "batch size B")->check(CLI::PositiveNumber);
  app.add_option("--heads", H, "heads H")->check(CLI::PositiveNumber);
  app.add_option("--tq", Tq, "query length")->check(CLI::PositiveNumber);
  app.add_option("--tk", Tk, "key length")->check(CLI::PositiveNumber);
  app.add_option("--dh", dh, "head dim (for q, k and v)")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads for the kernels")->check(CLI::PositiveNumber);
  app.add_option("--reps", reps, "timed passes (median reported)")->check(CLI::PositiveNumber);
  app.add_flag("--causal", causal, "causal mask");
  app.add_option("--dropout", dropout, "attention dropout (training mode)")->check(CLI::Range(0.0, 0.99));
  app.add_flag("--float64", f64, "float64 instead of float32");
  CLI11_PARSE(app, argc, argv);
  try {
    nl::set_num_threads(threads);
    nl::manual_seed(1);
    const nl::DType dt = f64 ? nl::DType::Float64 : nl::DType::Float32;
    nl::Tensor q = nl::Tensor::randn({B, H, Tq, dh}, 0.0, 1.0, dt), k = nl::Tensor::randn({B, H, Tk, dh}, 0.0, 1.0, dt);
    nl::Tensor v = nl::Tensor::randn({B, H, Tk, dh}, 0.0, 1.0, dt), w = nl::Tensor::randn({B, H, Tq, dh}, 0.0, 1.0, dt);
    nl::AttentionOptions o;
    o.causal = causal;
    o.dropout = dropout;
    o.training = dropout > 0;
    nlohmann::json j{{"batch", B}, {"heads", H}, {"tq", Tq}, {"tk", Tk}, {"dh", dh}, {"threads", threads},
                     {"reps", reps}, {"causal", causal}, {"dropout", dropout}, {"dtype", f64 ? "float64" : "float32"},
                     {"weights_tensor_mib", (double)(B * H * Tq * Tk * nl::dtype_size(dt)) / (1024.0 * 1024.0)}};
    j["fused"] = measure(&nl::attention, q, k, v, w, o, reps);
    j["composite"] = measure(&nl::attention_composite, q, k, v, w, o, reps);
    std::cout << j.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
