#include "common/cli_common.h"

#include <stdexcept>

#include "backends/backend.h"
#include "backends/runtime.h"
#include "engine/run_device.h"

namespace nlapp {

void add_threads_option(CLI::App* cmd, int* threads) {
  cmd->add_option("--threads", *threads, "CPU threads for OpenMP loops and OpenBLAS (one pool) [1 to 256]")
      ->check(CLI::Range(1, 256).description(""));
}

void apply_threads(int threads) { nl::set_num_threads(threads); }

void add_device_option(CLI::App& app, std::string* device) {
  // Global (before the command): fallthrough would let the task verbs' allow_extras swallow unknown flags.
  app.add_option("--device", *device, "Device for tensors: cpu, cuda or cuda:N (default cpu); before the command");
}

void check_device_option(const std::string& device) {
  const nl::Device d = nl::parse_device(device);
  nl::check_device(d);  // "no CUDA device: ... use --device cpu"
  set_run_device(d);
}

}  // namespace nlapp
