// `normlab reproduce powernorm`: Shen et al. 2020 at CPU scale — Table 1's analogue (mt on Multi30k with
// LN, BN (released), PN-V, PN), Table 2's analogue (lm on PTB, the same four), the batch-size ablation
// (max_tokens 1024 / 2048 / 4096 with --update-freq keeping 4,096 tokens per update) through the
// experiment runner, then Figures 2-4 from the batch-statistics probe (ResNet-20 on CIFAR-10 vs the
// Transformer). Tables and figures live in papers/powernorm_report.h, the paper numbers in report/paper_numbers.h.
#include <algorithm>
#include <fstream>
#include <iostream>

#include "common/command_registry.h"
#include "common/experiment_outcome.h"
#include "common/experiment_flags.h"
#include "engine/experiment.h"
#include "engine/task_cli.h"
#include "engine/task_registry.h"
#include "engine/trainer.h"
#include "nn/norm/factory.h"
#include "papers/powernorm_report.h"
#include "report/atomic_file.h"

namespace nlapp {
namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;

const std::vector<std::string> kParts{"table1", "table2", "ablation", "probes"};

struct PnArgs {
  ExperimentFlags flags;
  std::vector<std::string> parts = kParts;
  std::string data_bin = "data-bin";
  std::string data_root = "../shared/data";
  int64_t probe_steps = 300;
};

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<ExperimentRun> build_runs(const PnArgs& a) {
  return powernorm_runs(has(a.parts, "table1"), has(a.parts, "table2"), has(a.parts, "ablation"), a.flags.seeds, a.data_bin);
}

// The probe of `norm` on `task`/`config`, or its earlier records when <dir>/<norm>.jsonl holds `steps` lines.
BatchStatsRun probe(const std::string& task_name, const std::string& config, const json& overrides, const std::string& norm,
                    const fs::path& dir, const PnArgs& a) {
  const fs::path jsonl = dir / (norm + ".jsonl");
  BatchStatsRun old{norm, {}, jsonl, dir / (norm + ".svg")};
  std::ifstream in(jsonl);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) old.records.push_back(json::parse(line));
  if ((int64_t)old.records.size() == a.probe_steps) return old;
  auto task = make_task(task_name);
  json s = resolve_task_settings(*task, config, {});
  const json over = task_schema(*task).check_config(overrides, "probe " + task_name);
  for (const auto& [k, v] : over.items()) s[k] = v;
  s["threads"] = a.flags.threads;
  const json budget = experiment_budget(a.flags);  // named: items() refers to it (a temporary dies first)
  for (const auto& [k, v] : budget.items())  // --bf16 / --tf32: the precision of every part
    if (k == "bf16" || k == "tf32") s[k] = v;
  BatchStatsProbeConfig cfg;
  cfg.norms = {norm};
  cfg.steps = a.probe_steps;
  cfg.out = dir;
  cfg.quiet = a.flags.quiet;
  std::cout << "probe: " << task_name << " " << norm << ", " << a.probe_steps << " updates\n" << std::flush;
  return run_batch_stats_probe(*task, s, cfg).at(0);
}

void run(const PnArgs& a) {
  const fs::path out = a.flags.out;
  PowerNormProbes probes;
  const std::string setup = "Setup: " + describe_budget(a.flags) + "; parts: " + [&] {
    std::string p;
    for (const auto& x : a.parts) p += (p.empty() ? "" : ", ") + x;
    return p;
  }() + ".";
  auto write = [&](const std::vector<RunRecord>& rec) {
    write_file_atomic(out / "results.json",
                      json{{"experiment", "powernorm"}, {"seeds", a.flags.seeds}, {"runs", records_json(rec)}}.dump(2) + "\n");
    write_file_atomic(out / "results.md", format_powernorm_report(rec, probes, setup));
  };
  ExperimentOptions opt;
  opt.out = out;
  opt.registry = registry_root(a.flags.registry);
  opt.budget = experiment_budget(a.flags);
  opt.set = experiment_set(a.flags);
  opt.on_update = write;
  std::vector<RunRecord> rec = run_experiment(build_runs(a), opt);
  if (!reports_here(rec)) return;  // --distributed: rank 0 writes (and runs the probes)
  if (has(a.parts, "probes")) {
    probes.resnet.push_back(probe("resnet-cifar", "cpu", {{"norm", "batchnorm"}, {"data", a.data_root + "/cifar10"}}, "batchnorm", out / "probes" / "resnet", a));
    for (const char* n : {"batchnorm", "powernorm-v"})
      probes.mt.push_back(probe("mt", "multi30k", {{"data", a.data_bin + "/multi30k"}}, n, out / "probes" / "mt", a));
    write_powernorm_figures(out, probes);
  }
  write(rec);
  finish_experiment(out, rec);
}

void setup(CLI::App& app) {
  CLI::App* rep = app.get_subcommand("reproduce");
  auto* sub = rep->add_subcommand("powernorm",
                                  "Shen et al. 2020 (PowerNorm): Tables 1-2 analogues, the batch-size ablation and Figures 2-4 "
                                  "(resumes; docs/reproduce.md)");
  auto a = std::make_shared<PnArgs>();
  add_experiment_flags(sub, a->flags, "runs/powernorm");
  sub->add_option("--parts", a->parts, "What to run, comma-separated (default all: table1, table2, ablation, probes)")
      ->delimiter(',')
      ->check(CLI::IsMember(kParts));
  sub->add_option("--data-bin", a->data_bin, "Folder of the corpora `normlab data prepare` wrote (multi30k)")->capture_default_str();
  sub->add_option("--data-root", a->data_root, "Folder of the shared raw data (CIFAR-10 for the ResNet probe)")->capture_default_str();
  sub->add_option("--probe-steps", a->probe_steps, "Updates of each probe run (Figures 2-4) [a whole number from 1 to 100000000]")
      ->check(CLI::Range((int64_t)1, (int64_t)100000000).description(""))
      ->capture_default_str();
  sub->callback([a] { run(*a); });
}

CommandRegistrar reg{{"reproduce-powernorm", 23, setup}};
}  // namespace
}  // namespace nlapp
