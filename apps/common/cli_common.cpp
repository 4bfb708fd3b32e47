#include "common/cli_common.h"

#include <filesystem>
#include <stdexcept>

#include "backends/cpu/threads.h"

namespace nlapp {

void add_threads_option(CLI::App* cmd, int* threads) {
  cmd->add_option("--threads", *threads, "CPU threads for OpenMP loops and OpenBLAS (one pool)")
      ->check(CLI::PositiveNumber);
}

void apply_threads(int threads) { nl::set_num_threads(threads); }

void require_data_dir(const std::string& dir) {
  if (!std::filesystem::is_directory(dir))
    throw std::runtime_error("data folder '" + dir +
                             "' not found: install the Debian package dataset-fashion-mnist "
                             "(apt-get install dataset-fashion-mnist) or pass --data DIR with the four "
                             "MNIST-format IDX files (e.g. ../shared/data/mnist)");
}

}  // namespace nlapp
