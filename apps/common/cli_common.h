#pragma once
// Options shared by several subcommands.
#include <CLI/CLI.hpp>
#include <string>

namespace nlapp {

/// Adds `--threads N` (default 1): the one knob for OpenMP and OpenBLAS threads.
void add_threads_option(CLI::App* cmd, int* threads);
/// Applies the thread count (nl::set_num_threads); throws std::invalid_argument if < 1.
void apply_threads(int threads);

/// Adds the global `--device cpu|cuda[:N]` option (default cpu) to the top-level app, given before the
/// command (`normlab --device cuda:0 train ...`). The value is checked before the command runs
/// (check_device_option).
void add_device_option(CLI::App& app, std::string* device);
/// Parses and checks `--device`, then makes it the process's run device (engine/run_device.h: every
/// run's settings["device"], where the Trainer and the commands that load models put them). Throws
/// std::invalid_argument for a bad name, and "no CUDA device: ... use --device cpu" without a GPU (or
/// in a CUDA-less build).
void check_device_option(const std::string& device);

/// Makes every command of `app` without subcommands of its own refuse flags it does not have (CLI11's
/// allow_extras(false)). A verb that lists tasks (train, bench, reproduce, grad probe) allows extras so that
/// it can name a missing or unknown task, and CLI11 copies that to each subcommand added under it: a
/// mistyped flag of `bench transformer` or `reproduce xu2019` was dropped and the command ran with its
/// defaults. Called once, after every command is set up (main.cpp).
void strict_leaf_commands(CLI::App& app);

/// Checks that `bench --python` names an interpreter this process can run: a path (with a '/') to an
/// executable file, or a name found on PATH (as the shell that runs it searches). Throws
/// std::runtime_error "--python PATH cannot be run (<why>); pass --python with a Python 3 that has torch
/// ... or --no-pytorch" otherwise. Whether it has torch is not checked (a twin without it reports "no
/// reference" in its column, as documented).
void check_python_interpreter(const std::string& python);

}  // namespace nlapp
