#pragma once
// One subcommand per registered task under a verb (`normlab train mnist`, `normlab bench mnist`, ...):
// its flags come from the task's schema (task_schema), plus --config NAME|FILE. The verb adds its own
// flags and gets the task (set up or not, as it asks) and the resolved settings.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "engine/task.h"

namespace nlapp {

/// What the verb's callback receives.
struct TaskInvocation {
  std::unique_ptr<Task> task;
  nlohmann::json settings;     ///< defaults ← config ← flags, all validated
  std::string config_source;   ///< the config file used, or "" for the built-in defaults
};

/// How a verb uses tasks.
struct TaskVerb {
  std::vector<std::string> skip;  ///< schema keys the verb does not expose (it sets them itself)
  /// Adds the verb's own flags to a task's subcommand (may be empty).
  std::function<void(CLI::App*)> extra_flags;
  /// Runs the verb. Throws on errors (main prints them and exits 1).
  std::function<void(TaskInvocation&)> run;
};

/// Adds one subcommand per registered task to `verb_cmd` (which then requires one).
void add_task_subcommands(CLI::App* verb_cmd, const TaskVerb& verb);

/// Resolves settings for `task` from an optional config (name or path; "" = apps/configs/<task>/
/// default.json when it exists, else the built-in defaults) and raw flag texts, plus "device" = the
/// process's run_device() (the global `normlab --device`; engine/run_device.h). Throws
/// std::invalid_argument / std::runtime_error naming the bad setting, file or flag.
nlohmann::json resolve_task_settings(const Task& task, const std::string& config,
                                     const std::map<std::string, std::string>& flags, std::string* source = nullptr);

}  // namespace nlapp
