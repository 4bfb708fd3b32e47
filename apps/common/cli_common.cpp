#include "common/cli_common.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
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

void strict_leaf_commands(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_subcommands([](const CLI::App*) { return true; }).empty()) sub->allow_extras(false);
    else strict_leaf_commands(*sub);
  }
}

void check_device_option(const std::string& device) {
  const nl::Device d = nl::parse_device(device);
  nl::check_device(d);  // "no CUDA device: ... use --device cpu"
  set_run_device(d);
}

void check_python_interpreter(const std::string& python) {
  namespace fs = std::filesystem;
  std::string why;
  auto runnable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (python.empty()) {
    why = "it is empty";
  } else if (python.find('/') != std::string::npos) {
    std::error_code ec;
    if (!fs::exists(python, ec)) why = "no such file";
    else if (fs::is_directory(python, ec)) why = "it is a folder";
    else if (!runnable(python)) why = "not an executable file";
  } else {
    bool found = false;
    std::istringstream path(std::getenv("PATH") ? std::getenv("PATH") : "");
    for (std::string dir; !found && std::getline(path, dir, ':');) found = runnable(fs::path(dir.empty() ? "." : dir) / python);
    if (!found) why = "not found on PATH";
  }
  if (!why.empty())
    throw std::runtime_error("--python " + python + " cannot be run (" + why +
                             "); pass --python with the path of a Python 3 that has torch (Debian's /usr/bin/python3 "
                             "with python3-torch: scripts/install-deps.sh --bench), or --no-pytorch to time normlab alone");
}

}  // namespace nlapp
