// normlab_bench_autograd_memory: how much memory autograd keeps for a deep MLP.
// Model: `layers` x (Linear(width, width) -> LayerNorm(width) -> ReLU) on a float32 batch
// [batch, width], loss = mean(output). Reports, as one JSON object on stdout:
//   graph_held_bytes  bytes of tensor storage the graph keeps alive after the forward, before backward
//                     (nl::graph_held_bytes, autograd/memory.h);
//   peak_rss_bytes    this process's peak resident set size after forward + backward
//                     (getrusage ru_maxrss), so run each measurement in a fresh process;
//   rss_before_forward_bytes  peak RSS once the model and the input exist (the part autograd cannot change);
//   forward_ms, backward_ms   wall time of one pass each.
// Usage: normlab_bench_autograd_memory [--layers 12] [--batch 4096] [--width 512] [--threads 1]
#include <sys/resource.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "autograd/functions.h"
#include "autograd/memory.h"
#include "backends/runtime.h"
#include "nn/linear.h"
#include "nn/norm/layer_norm.h"

namespace {
size_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (size_t)u.ru_maxrss * 1024;  // Linux reports KiB
}
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Peak RSS and graph-held bytes of forward + backward through an MLP with LayerNorm"};
  int64_t layers = 12, batch = 4096, width = 512;
  int threads = 1;
  app.add_option("--layers", layers, "number of Linear -> LayerNorm -> ReLU blocks")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "rows of the input batch")->check(CLI::PositiveNumber);
  app.add_option("--width", width, "features of every layer")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads for the kernels")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    nl::set_num_threads(threads);
    nl::manual_seed(1);
    std::vector<std::shared_ptr<nl::Linear>> fcs;
    std::vector<std::shared_ptr<nl::LayerNorm>> norms;
    for (int64_t i = 0; i < layers; ++i) {
      fcs.push_back(std::make_shared<nl::Linear>(width, width));
      norms.push_back(std::make_shared<nl::LayerNorm>(width));
    }
    nl::Variable x(nl::Tensor::randn({batch, width}));
    const size_t rss0 = peak_rss_bytes();

    auto t0 = std::chrono::steady_clock::now();
    nl::Variable h = x;
    for (int64_t i = 0; i < layers; ++i) h = nl::relu(norms[i]->forward(fcs[i]->forward(h)));
    nl::Variable loss = nl::mean(h);
    h = nl::Variable();  // the user's code keeps only the loss, as in a training step
    const double fwd_ms = ms_since(t0);
    const size_t held = nl::graph_held_bytes(loss);

    t0 = std::chrono::steady_clock::now();
    loss.backward();
    const double bwd_ms = ms_since(t0);

    const double mib = 1024.0 * 1024.0;
    const size_t peak = peak_rss_bytes();
    nlohmann::json j{{"layers", layers},
                     {"batch", batch},
                     {"width", width},
                     {"threads", threads},
                     {"graph_held_bytes", held},
                     {"graph_held_mib", held / mib},
                     {"peak_rss_bytes", peak},
                     {"peak_rss_mib", peak / mib},
                     {"rss_before_forward_bytes", rss0},
                     {"rss_before_forward_mib", rss0 / mib},
                     {"forward_ms", fwd_ms},
                     {"backward_ms", bwd_ms},
                     {"loss", loss.item()}};
    std::cout << j.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
