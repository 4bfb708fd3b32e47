#include "common/cli_common.h"

#include <stdexcept>

#include "backends/cpu/threads.h"

namespace nlapp {

void add_threads_option(CLI::App* cmd, int* threads) {
  cmd->add_option("--threads", *threads, "CPU threads for OpenMP loops and OpenBLAS (one pool) [1 to 256]")
      ->check(CLI::Range(1, 256).description(""));
}

void apply_threads(int threads) { nl::set_num_threads(threads); }

}  // namespace nlapp
