// `normlab reproduce xu2019`: Xu et al. 2019, Tables 1-4 and Figures 1-3, every column that exists at
// CPU scale (mt on Multi30k, lm on tiny-shakespeare, cls on RT and SST-5, MNIST, parse on UD-EWT) ×
// the seven LayerNorm-family variants × --seeds, through the experiment runner (finished runs are not
// redone; results.md, results.json and the figures are rewritten after every run). The columns and
// table shapes live in papers/xu2019_report.h, the paper's numbers in report/paper_numbers.h.
#include <algorithm>
#include <sstream>

#include "common/command_registry.h"
#include "common/experiment_outcome.h"
#include "common/experiment_flags.h"
#include "engine/experiment.h"
#include "papers/xu2019_report.h"
#include "report/atomic_file.h"

namespace nlapp {
namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;

struct XuArgs {
  ExperimentFlags flags;
  std::vector<std::string> tasks = xu2019_task_keys();
  XuPaths paths;
};

void write_outputs(const fs::path& out, const XuArgs& a, const std::vector<XuColumn>& cols, const std::vector<RunRecord>& rec) {
  write_file_atomic(out / "results.json",
                    json{{"experiment", "xu2019"}, {"seeds", a.flags.seeds}, {"runs", records_json(rec)}}.dump(2) + "\n");
  write_xu2019_figures(out, cols, rec);
  write_file_atomic(out / "results.md", format_xu2019_report(cols, rec, "Setup: " + describe_budget(a.flags) + "."));
}

void run(const XuArgs& a) {
  std::vector<XuColumn> cols = xu2019_columns(a.paths);
  std::vector<ExperimentRun> runs = xu2019_runs(cols, a.tasks, a.flags.seeds);
  ExperimentOptions opt;
  opt.out = a.flags.out;
  opt.registry = registry_root(a.flags.registry);
  opt.budget = experiment_budget(a.flags);
  opt.set = experiment_set(a.flags);
  // Without --bf16 a column continues in the precision its registered runs have (the MT column of the
  // campaign is bfloat16), so one command resumes and prints every column.
  if (!a.flags.bf16 && !opt.registry.empty()) keep_column_precision(runs, opt);
  opt.on_update = [&](const std::vector<RunRecord>& rec) { write_outputs(opt.out, a, cols, rec); };
  const auto rec = run_experiment(runs, opt);
  finish_experiment(opt.out, rec);
}

void setup(CLI::App& app) {
  CLI::App* rep = app.get_subcommand("reproduce");
  auto* sub = rep->add_subcommand("xu2019",
                                  "Xu et al. 2019 Tables 1-4 and Figures 1-3: every CPU-scale column x the seven LayerNorm "
                                  "variants x seeds (resumes; docs/reproduce.md)");
  auto a = std::make_shared<XuArgs>();
  add_experiment_flags(sub, a->flags, "runs/xu2019");
  std::string keys;
  for (const auto& k : xu2019_task_keys()) keys += (keys.empty() ? "" : ", ") + k;
  sub->add_option("--tasks", a->tasks, "Columns to run, comma-separated (default all: " + keys + ")")
      ->delimiter(',')
      ->check(CLI::IsMember(xu2019_task_keys()));
  sub->add_option("--data-root", a->paths.data_root, "Folder of the shared raw data (MNIST, UD-EWT)")->capture_default_str();
  sub->add_option("--data-bin", a->paths.data_bin,
                  "Folder of the corpora `normlab data prepare` wrote (multi30k, rt, sst5)")
      ->capture_default_str();
  sub->callback([a] { run(*a); });
}

CommandRegistrar reg{{"reproduce-xu2019", 22, setup}};
}  // namespace
}  // namespace nlapp
