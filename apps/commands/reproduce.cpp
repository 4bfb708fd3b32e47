// `normlab reproduce <task>`: every norm variant × seeds of a task's experiment (engine/task_reproduction.h),
// run by the experiment runner (engine/experiment.h: runs recorded in the registry or finished in --out
// are not redone, an interrupted one resumes from its checkpoint); writes results.json, results.md (the
// paper's column beside ours) and SVG curves into --out, rewritten after every run.

#include "common/command_registry.h"
#include "common/experiment_outcome.h"
#include "common/experiment_flags.h"
#include "engine/experiment.h"
#include "engine/task_cli.h"
#include "engine/task_reproduction.h"
#include "nn/norm/factory.h"

namespace nlapp {
namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;

struct ReproduceArgs {
  int seeds = 3;
  std::vector<std::string> variants;  ///< empty: the LayerNorm family of Xu et al. that the task's --norm takes
  std::string out;
  RegistryFlags registry;
};

void run(TaskInvocation& inv, const ReproduceArgs& args) {
  TaskReproduction a{args.seeds, checked_variants(*inv.task, inv.settings, args.variants)};
  const auto& info = inv.task->info();
  ExperimentOptions opt;
  // One working folder per registry column: another config or precision is another set of runs, whose
  // checkpoints must not meet (a resume in another precision is refused, rightly).
  opt.out = args.out.empty() ? fs::path("runs/reproduce-" + info.name) / registry_column(inv) : fs::path(args.out);
  opt.registry = registry_root(args.registry);
  const std::vector<ExperimentRun> runs = task_reproduction_runs(inv, a);
  opt.on_update = [&](const std::vector<RunRecord>& rec) { write_task_reproduction(inv, a, opt.out, rec); };
  const auto rec = run_experiment(runs, opt);
  finish_experiment(opt.out, rec);
}

void setup(CLI::App& app) {
  auto* rep = app.add_subcommand("reproduce", "Re-run a paper's experiment for every norm variant and seed");
  auto a = std::make_shared<ReproduceArgs>();
  TaskVerb verb;
  verb.skip = {"norm", "seed", "out"};
  verb.extra_flags = [a](CLI::App* sub) {
    sub->add_option("--seeds", a->seeds, "Seeds 1..N per variant [a whole number from 1 to 100]")
        ->check(CLI::Range(1, 100).description(""))
        ->capture_default_str();
    sub->add_option("--variants", a->variants,
                    "Norm variants to run: any --norm name of the task (the factory registry), e.g. layernorm,lng "
                    "with --groups G (default: the LayerNorm family of Xu et al. the task offers)")
        ->delimiter(',')
        ->check(CLI::IsMember(nl::all_norm_names()));
    sub->add_option("--out", a->out, "Working folder: runs with their checkpoints, results.md, curves (default runs/reproduce-<task>/<column>, the column as in the registry: one-epoch, one-epoch+bf16, ...)");
    add_registry_flags(sub, a->registry);
  };
  verb.run = [a](TaskInvocation& inv) { run(inv, *a); };
  add_task_subcommands(rep, verb);
}

CommandRegistrar reg{{"reproduce", 20, setup}};
}  // namespace
}  // namespace nlapp
