#pragma once
// Options shared by several subcommands.
#include <CLI/CLI.hpp>
#include <string>

namespace nlapp {

/// Adds `--threads N` (default 1): the one knob for OpenMP and OpenBLAS threads.
void add_threads_option(CLI::App* cmd, int* threads);
/// Applies the thread count (nl::set_num_threads); throws std::invalid_argument if < 1.
void apply_threads(int threads);
/// Checks that `dir` exists; otherwise throws std::runtime_error with the fix for MNIST-like data.
void require_data_dir(const std::string& dir);

}  // namespace nlapp
