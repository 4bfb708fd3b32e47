// `normlab train <task>`: one run of a registered task through the Trainer.
#include <cmath>
#include <cstdio>

#include "common/command_registry.h"
#include "engine/task_cli.h"
#include "engine/trainer.h"

namespace nlapp {
namespace {

void run(TaskInvocation& inv) {
  inv.task->setup(inv.settings);
  Trainer trainer(*inv.task, inv.settings);
  RunResult r = trainer.run();
  if (trainer.rank() != 0) return;  // --distributed: rank 0 reports
  const auto& info = inv.task->info();
  std::printf("%s (%s, seed %lld): best valid %s %.2f at epoch %.2f; test %s %.2f; %lld updates; results in %s\n",
              info.name.c_str(), inv.settings["norm"].is_string() ? inv.settings["norm"].get<std::string>().c_str() : "-",
              (long long)inv.settings["seed"].get<int64_t>(), info.metric.c_str(), r.best_valid, r.best_epoch,
              info.reported_metric().c_str(), r.test.count(info.reported_metric()) ? r.test.at(info.reported_metric()) : std::nan(""),
              (long long)r.updates, inv.settings["out"].get<std::string>().c_str());
}

void setup(CLI::App& app) {
  auto* train = app.add_subcommand("train", "Train a task of the papers (settings: --config and flags)");
  add_task_subcommands(train, TaskVerb{{}, nullptr, run});
}

CommandRegistrar reg{{"train", 10, setup}};
}  // namespace
}  // namespace nlapp
