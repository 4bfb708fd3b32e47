// `normlab train <task>`: one run of a registered task through the Trainer.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "common/command_registry.h"
#include "engine/task_cli.h"
#include "engine/trainer.h"

namespace nlapp {
namespace {

// The number of processes an MPI launcher started (Open MPI's OMPI_COMM_WORLD_SIZE, MPICH's PMI_SIZE); 1 without one.
int64_t launcher_processes() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* e = std::getenv(v)) return std::max<int64_t>(1, std::atoll(e));
  return 1;
}

void run(TaskInvocation& inv) {
  if (const int64_t n = launcher_processes(); n > 1 && !inv.settings.value("distributed", false))
    throw std::invalid_argument("started by mpirun as one of " + std::to_string(n) +
                                " processes without --distributed: each would train the same run into the same --out. "
                                "Add --distributed for data-parallel training (docs/distributed.md), or run one process");
  inv.task->setup(inv.settings);
  Trainer trainer(*inv.task, inv.settings);
  RunResult r = trainer.run();
  if (trainer.rank() != 0) return;  // --distributed: rank 0 reports
  const auto& info = inv.task->info();
  // The test metric only where a test ran (--no-test, or a run that stopped before it, has none).
  char test[96] = "no test";
  if (r.test.count(info.reported_metric()))
    std::snprintf(test, sizeof test, "%s %.2f", metric_label("test", info.reported_metric()).c_str(),
                  r.test.at(info.reported_metric()));
  std::printf("%s (%s, seed %lld): best %s %.2f at epoch %.2f; %s; %lld updates; results in %s\n",
              info.name.c_str(), inv.settings["norm"].is_string() ? inv.settings["norm"].get<std::string>().c_str() : "-",
              (long long)inv.settings["seed"].get<int64_t>(), metric_label("valid", info.metric).c_str(), r.best_valid,
              r.best_epoch, test, (long long)r.updates, inv.settings["out"].get<std::string>().c_str());
}

void setup(CLI::App& app) {
  auto* train = app.add_subcommand("train", "Train a task of the papers (settings: --config and flags)");
  add_task_subcommands(train, TaskVerb{{}, nullptr, run});
}

CommandRegistrar reg{{"train", 10, setup}};
}  // namespace
}  // namespace nlapp
