#pragma once
// Options shared by several subcommands.
#include <CLI/CLI.hpp>
#include <string>

namespace nlapp {

/// Adds `--threads N` (default 1): the one knob for OpenMP and OpenBLAS threads.
void add_threads_option(CLI::App* cmd, int* threads);
/// Applies the thread count (nl::set_num_threads); throws std::invalid_argument if < 1.
void apply_threads(int threads);

}  // namespace nlapp
