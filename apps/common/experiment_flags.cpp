#include "common/experiment_flags.h"

#include <string>

#include "engine/registry.h"

namespace nlapp {
using json = nlohmann::json;

void add_registry_flags(CLI::App* cmd, RegistryFlags& f) {
  cmd->add_option("--registry", f.root,
                  "Results registry: a run whose record there has the same settings is not redone, and every "
                  "finished run is recorded there (<DIR>/<group>/<column>/<variant>/seed<N>.json)")
      ->capture_default_str();
  cmd->add_flag("--no-registry", f.off, "Neither read nor write the registry: train every run (in --out)");
}

std::string registry_root(const RegistryFlags& f) { return f.off ? "" : f.root; }

void add_experiment_flags(CLI::App* cmd, ExperimentFlags& f, const std::string& default_out) {
  f.out = default_out;
  add_registry_flags(cmd, f.registry);
  cmd->add_option("--seeds", f.seeds, "Seeds 1..N per run [a whole number from 1 to " + std::to_string(kMaxSeeds) + "]")
      ->check(CLI::Range(1, kMaxSeeds).description(""))
      ->capture_default_str();
  cmd->add_option("--out", f.out, "Working folder (runs/<label>/ per run with its checkpoints, results.md, results.json, SVG figures)")
      ->capture_default_str();
  cmd->add_option("--max-update", f.max_update,
                  "Budget: stop every run after this many updates (0: no limit; default: each config's own) "
                  "[a whole number >= 0]")
      ->check(CLI::Range((int64_t)0, (int64_t)1 << 53).description(""));
  cmd->add_option("--max-epoch", f.max_epoch, "Budget: epochs of every run (default: each config's own) [a whole number >= 1]")
      ->check(CLI::Range((int64_t)1, (int64_t)1000000).description(""));
  cmd->add_option("--threads", f.threads, "CPU threads of every run [a whole number from 1 to 256]")
      ->check(CLI::Range(1, 256).description(""))
      ->capture_default_str();
  cmd->add_flag("--quiet", f.quiet, "No per-run progress lines (the run i of N lines stay)");
  cmd->add_flag("--bf16", f.bf16,
                "Mixed precision for every run (bfloat16 products, float32 accumulation; part of each run's settings; "
                "docs/mixed-precision.md)");
  cmd->add_flag("--tf32", f.tf32, "Let float32 products on a GPU use TF32 in every run (part of each run's settings)");
  cmd->add_option("--set", f.set,
                  "KEY=VALUE: a setting for every run whose task has it, e.g. --set beam=1 --set max-len-b=60 "
                  "(repeatable; part of each run's settings)");
}

std::map<std::string, std::string> experiment_set(const ExperimentFlags& f) {
  std::map<std::string, std::string> m;
  for (const auto& t : f.set) {
    const auto eq = t.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("--set '" + t + "': write KEY=VALUE, e.g. --set beam=1");
    std::string k = t.substr(0, eq);
    if (k.rfind("--", 0) == 0) k = k.substr(2);
    for (char& c : k)
      if (c == '-') c = '_';
    m[k] = t.substr(eq + 1);
  }
  return m;
}

json experiment_budget(const ExperimentFlags& f) {
  json b = {{"threads", f.threads}, {"quiet", f.quiet}};
  if (f.max_update >= 0) b["max_update"] = f.max_update;
  if (f.max_epoch >= 0) b["max_epoch"] = f.max_epoch;
  if (f.bf16) b["bf16"] = true;
  if (f.tf32) b["tf32"] = true;
  return b;
}

std::string describe_budget(const ExperimentFlags& f) {
  std::string s = std::to_string(f.seeds) + " seed(s)" + (f.bf16 ? "; precision bfloat16 (--bf16)" : "") +
                  (f.tf32 ? "; TF32 float32 products (--tf32)" : "") + "; run length: ";
  if (f.max_update < 0 && f.max_epoch < 0) {
    s += "each config's own (the paper-like setting)";
    for (const auto& t : f.set) s += "; --set " + t;
    return s;
  }
  if (f.max_epoch >= 0) s += std::to_string(f.max_epoch) + " epoch(s)";
  if (f.max_update > 0) s += (f.max_epoch >= 0 ? ", at most " : "at most ") + std::to_string(f.max_update) + " updates";
  if (f.max_update == 0 && f.max_epoch < 0) s += "no update limit, each config's epochs";
  s += " per run (a smoke-test budget: far shorter than the paper's training)";
  for (const auto& t : f.set) s += "; --set " + t;
  return s;
}

}  // namespace nlapp
