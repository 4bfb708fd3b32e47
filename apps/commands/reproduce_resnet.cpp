// `normlab reproduce ni2024-resnet`: Ni et al. 2024's "ResNet without ReLU on CIFAR-10" table (slides;
// ../shared/docs/ni-pn-details.md §5.2): task resnet-cifar once per norm (instancenorm, batchnorm,
// layernorm, groupnorm, lng) × seeds, run by the experiment runner (engine/experiment.h) as the runs of
// `normlab reproduce resnet-cifar` (task_reproduction_runs: registered as resnet-cifar/<config>/<norm>/
// seed<N>, finished runs not redone, interrupted ones resumed from their checkpoint_last, diverged ones
// recorded). results.md puts our train and test accuracy next to the slides' numbers and judges the slides'
// order LN-G > GN > LN > BN > IN over seeds (papers/ni2024_resnet_report.h; the same table is the
// ni2024/resnet block of `normlab report`). A subcommand of `normlab reproduce` (order 22), as
// ni2024-capacity, because its table has two paper columns and the order.

#include "common/command_registry.h"
#include "common/experiment_flags.h"
#include "common/experiment_outcome.h"
#include "engine/experiment.h"
#include "engine/task_cli.h"
#include "engine/task_registry.h"
#include "engine/task_reproduction.h"
#include "engine/trainer.h"
#include "nn/models/resnet_cifar.h"
#include "papers/ni2024_resnet_report.h"
#include "report/atomic_file.h"

namespace nlapp {
namespace {
namespace fs = std::filesystem;

struct ResNetArgs {
  std::string config = "cpu";
  std::map<std::string, std::string> flags;
  std::vector<std::string> norms{"instancenorm", "batchnorm", "layernorm", "groupnorm", "lng"};
  int seeds = 3;
  std::string out;
  RegistryFlags registry;
};

void run(const ResNetArgs& a) {
  TaskInvocation inv;
  inv.task = make_task("resnet-cifar");
  inv.settings = resolve_task_settings(*inv.task, a.config, a.flags, &inv.config_source);
  const TaskReproduction what{a.seeds, checked_variants(*inv.task, inv.settings, a.norms)};
  ExperimentOptions opt;
  opt.out = a.out.empty() ? fs::path("runs/ni2024-resnet") / registry_column(inv) : fs::path(a.out);
  opt.registry = registry_root(a.registry);
  opt.on_update = [&](const std::vector<RunRecord>& rec) {
    write_task_reproduction(inv, what, opt.out, rec);  // results.json and the curves
    write_file_atomic(opt.out / "results.md",
                      "# Ni et al. 2024: CIFAR ResNet without ReLU\n\n" + format_ni2024_resnet(inv, what, rec));
  };
  const auto rec = run_experiment(task_reproduction_runs(inv, what), opt);
  finish_experiment(opt.out, rec);
}

void setup(CLI::App& app) {
  CLI::App* rep = app.get_subcommand("reproduce");
  auto* sub = rep->add_subcommand("ni2024-resnet",
                                  "Ni et al. 2024 ResNet without ReLU on CIFAR-10: IN, BN, LN, GN, LN-G next to the "
                                  "slides' table (task resnet-cifar)");
  auto a = std::make_shared<ResNetArgs>();
  sub->add_option("--config", a->config, "resnet-cifar settings: a name in apps/configs/resnet-cifar/ or a .json path")
      ->capture_default_str();
  task_schema(*make_task("resnet-cifar")).add_flags(sub, a->flags, {"norm", "seed", "out"});
  sub->add_option("--norms", a->norms, "Norms to run")
      ->delimiter(',')
      ->check(CLI::IsMember(nl::image_norm_names()))
      ->capture_default_str();
  sub->add_option("--seeds", a->seeds, "Seeds 1..N per norm")->check(CLI::Range(1, 100))->capture_default_str();
  sub->add_option("--out", a->out,
                  "Working folder: runs with their checkpoints, results.md, curves (default "
                  "runs/ni2024-resnet/<config>)");
  add_registry_flags(sub, a->registry);
  sub->callback([a] { run(*a); });
}

CommandRegistrar reg{{"reproduce-ni2024-resnet", 22, setup}};
}  // namespace
}  // namespace nlapp
