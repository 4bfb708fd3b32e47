// `normlab reproduce ni2024-capacity`: Ni et al. 2024's capacity experiment (the slides' Figure;
// ../shared/docs/ni-pn-details.md §5.1): training accuracy on random labels (MNIST-RL, CIFAR-10-RL) of a
// linear classifier, a linear network, an LN-Net (LayerNorm) and LN-Nets with LN-G for each group count G
// of --groups-list, all of the task lnnet's shape (--width, --depth) (panels a-b), and the Hessian
// measure H of each trained model against G (panels c-d; the task's "hessian" test metric). The runs go
// through the experiment runner (engine/experiment.h): recorded in the results registry as
// ni2024-capacity/<config>-<dataset>/<model>/seed<N>, not redone when recorded with the same settings,
// resumed from their checkpoint_last when interrupted. Writes results.json, results.md
// (papers/ni2024_capacity_report.h; the same text is the ni2024/capacity block of `normlab report`),
// train_acc_vs_groups.svg and hessian_vs_groups.svg into the working folder after every run.
//
// It is a subcommand of `normlab reproduce` (registered after it, order 21) rather than a sweep flag of
// the generic variants × seeds loop, because its rows are different models (depth 0, norm none, LN-G
// with G), not norm names.

#include "common/command_registry.h"
#include "common/experiment_flags.h"
#include "common/experiment_outcome.h"
#include "engine/experiment.h"
#include "engine/task_cli.h"
#include "engine/task_registry.h"
#include "engine/trainer.h"
#include "papers/ni2024_capacity_report.h"
#include "report/atomic_file.h"

namespace nlapp {
namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;

struct CapacityArgs {
  std::string config = "capacity-cpu";
  std::map<std::string, std::string> flags;
  std::vector<std::string> datasets{"mnist", "cifar10"};
  std::vector<int64_t> groups{1, 2, 4, 8, 16, 32, 64, 128};
  int seeds = 3;
  std::string out;
  RegistryFlags registry;
};

void run(const CapacityArgs& a) {
  const CapacityPlan plan = capacity_plan(a.config, a.flags, a.datasets, a.groups, a.seeds);
  ExperimentOptions opt;
  opt.out = a.out.empty() ? fs::path("runs/ni2024-capacity") / (plan.config_source.empty() ? "builtin" : fs::path(plan.config_source).stem().string())
                          : fs::path(a.out);
  opt.registry = registry_root(a.registry);
  opt.on_update = [&](const std::vector<RunRecord>& rec) {
    write_file_atomic(opt.out / "results.json", json{{"experiment", "ni2024-capacity"}, {"config", plan.config_source},
                                                     {"runs", records_json(rec)}}.dump(2) + "\n");
    write_file_atomic(opt.out / "results.md", "# Ni et al. 2024: capacity of LN-Nets on random labels (slides' Figure, "
                                              "panels a-d)\n\n" + format_ni2024_capacity(plan, rec));
    write_capacity_figures(opt.out, plan, rec);
  };
  const auto rec = run_experiment(capacity_runs(plan), opt);
  finish_experiment(opt.out, rec);
}

void setup(CLI::App& app) {
  CLI::App* rep = app.get_subcommand("reproduce");
  auto* sub = rep->add_subcommand("ni2024-capacity",
                                  "Ni et al. 2024 capacity: training accuracy on MNIST-RL / CIFAR-10-RL of linear "
                                  "baselines, LN-Net and LN-G against G (task lnnet)");
  auto a = std::make_shared<CapacityArgs>();
  sub->add_option("--config", a->config, "lnnet settings: a name in apps/configs/lnnet/ or a .json path; flags override it")
      ->capture_default_str();
  task_schema(*make_task("lnnet")).add_flags(sub, a->flags, {"norm", "groups", "seed", "out", "dataset"});
  sub->add_option("--datasets", a->datasets, "Image sets, each run with random labels as configured")
      ->delimiter(',')
      ->check(CLI::IsMember({"mnist", "cifar10"}))
      ->capture_default_str();
  sub->add_option("--groups-list", a->groups, "Group counts G of the LN-Net rows (1 = LayerNorm); each must divide --width")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--seeds", a->seeds, "Seeds 1..N per model")->check(CLI::Range(1, 100))->capture_default_str();
  sub->add_option("--out", a->out,
                  "Working folder: runs with their checkpoints, results.md, figures (default runs/ni2024-capacity/<config>)");
  add_registry_flags(sub, a->registry);
  sub->callback([a] { run(*a); });
}

CommandRegistrar reg{{"reproduce-ni2024-capacity", 21, setup}};
}  // namespace
}  // namespace nlapp
