#pragma once
// The flags every multi-task `normlab reproduce <paper>` command shares: seeds, output folder and the
// run budget passed through to every run (--max-update / --max-epoch for CPU-scale smoke runs,
// --threads, --quiet).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace nlapp {

/// Where a reproduction reads and records finished runs (engine/registry.h).
struct RegistryFlags {
  std::string root = "results";  ///< --registry DIR
  bool off = false;              ///< --no-registry: train everything, record nothing
};

/// Adds --registry DIR and --no-registry to `cmd`.
void add_registry_flags(CLI::App* cmd, RegistryFlags& f);

/// The registry root for ExperimentOptions::registry: "" with --no-registry.
std::string registry_root(const RegistryFlags& f);

/// Values of the shared flags.
struct ExperimentFlags {
  int seeds = 3;  ///< 1 .. kMaxSeeds (engine/registry.h)
  std::string out;
  int64_t max_update = -1;  ///< -1: each config's own
  int64_t max_epoch = -1;   ///< -1: each config's own
  int threads = 1;
  bool quiet = false;
  bool bf16 = false;  ///< --bf16: every run in mixed precision (part of each run's settings)
  bool tf32 = false;  ///< --tf32: float32 products on a GPU may use TF32
  std::vector<std::string> set;  ///< --set KEY=VALUE texts
  RegistryFlags registry;
};

/// Adds --seeds, --out (default `default_out`), --max-update, --max-epoch, --threads, --quiet, --bf16, --tf32,
/// --set KEY=VALUE (repeatable), --registry and --no-registry to `cmd`.
void add_experiment_flags(CLI::App* cmd, ExperimentFlags& f, const std::string& default_out);

/// The settings applied to every run: max_update / max_epoch when given, threads, quiet, and bf16 / tf32
/// when set (a column of a paper's table is run in one precision: its registry records then hold other
/// settings than a float32 run's, so neither replaces the other).
nlohmann::json experiment_budget(const ExperimentFlags& f);

/// The --set texts as key → value ("max-len-b" and "max_len_b" both name max_len_b). Throws
/// std::invalid_argument for a text without '=' or with an empty key.
std::map<std::string, std::string> experiment_set(const ExperimentFlags& f);

/// "budget: at most N updates and M epoch(s) per run" or "budget: each config's own run length", and the seeds.
std::string describe_budget(const ExperimentFlags& f);

}  // namespace nlapp
