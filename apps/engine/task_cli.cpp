#include "engine/task_cli.h"

#include <algorithm>

#include "engine/run_device.h"
#include "engine/task_registry.h"
#include "engine/trainer.h"

namespace nlapp {
using json = nlohmann::json;

json resolve_task_settings(const Task& task, const std::string& config, const std::map<std::string, std::string>& flags,
                           std::string* source) {
  OptionSchema schema = task_schema(task);
  json file_cfg = json::object();
  std::string path;
  if (!config.empty()) {
    path = find_config(task.info().name, config);
  } else {
    auto names = config_names(task.info().name);
    if (std::find(names.begin(), names.end(), "default") != names.end()) path = find_config(task.info().name, "default");
  }
  if (!path.empty()) {
    json j = read_json_file(path);
    if (j.contains("task") && j["task"] != task.info().name)
      throw std::invalid_argument(path + ": this config is for task " + j["task"].dump() + ", not " + task.info().name);
    file_cfg = schema.check_config(j, path);
  }
  if (source) *source = path;
  json s = schema.resolve(file_cfg, flags);
  s["device"] = run_device().str();  // not a schema setting: the global --device (engine/run_device.h)
  return s;
}

namespace {
// "default, one-epoch" (the task's config names), or "none".
std::string config_list(const std::string& task) {
  std::string names;
  for (const auto& n : config_names(task)) names += (names.empty() ? "" : ", ") + n;
  return names.empty() ? "none" : names;
}
}  // namespace

void add_task_subcommands(CLI::App* verb_cmd, const TaskVerb& verb) {
  // A missing or unknown task is reported by name with the list of tasks (CLI11 alone would say
  // "A subcommand is required").
  verb_cmd->require_subcommand(0, 1);
  verb_cmd->allow_extras();
  verb_cmd->callback([verb_cmd] {
    if (!verb_cmd->get_subcommands().empty()) return;
    std::string all;
    for (const auto& n : task_names()) all += (all.empty() ? "" : ", ") + n;
    std::string cmd = verb_cmd->get_name();  // the whole command, e.g. "grad probe"
    for (const CLI::App* p = verb_cmd->get_parent(); p && p->get_parent(); p = p->get_parent()) cmd = p->get_name() + " " + cmd;
    const auto extra = verb_cmd->remaining();
    if (!extra.empty() && extra.front().rfind("-", 0) == 0)
      throw std::invalid_argument("`normlab " + cmd + "` takes the task first, then its flags: normlab " + cmd +
                                  " TASK " + extra.front() + " ...; tasks: " + all);
    if (!extra.empty())
      throw std::invalid_argument("unknown task '" + extra.front() + "' for `normlab " + cmd + "`; tasks: " + all);
    throw std::invalid_argument("`normlab " + cmd + "` needs a task: one of " + all + " (normlab " + cmd +
                                " TASK --help lists its settings)");
  });
  for (const auto& entry : task_registry()) {
    auto* sub = verb_cmd->add_subcommand(entry.name, entry.description);
    auto flags = std::make_shared<std::map<std::string, std::string>>();
    auto config = std::make_shared<std::string>();
    auto task = std::shared_ptr<Task>(entry.make());
    const std::string names = config_list(entry.name);
    auto* config_opt = sub->add_option("--config", *config,
                    "Settings file: a name in apps/configs/" + entry.name + "/ (" + names +
                        ") or a path to a .json file; flags override it");
    // --help shows the values a run without --config uses: the built-in defaults with default.json applied.
    OptionSchema shown = task_schema(*task);
    const auto all = config_names(entry.name);
    const bool has_default = std::find(all.begin(), all.end(), "default") != all.end();
    if (has_default) {
      try {  // a broken default.json is reported when the task runs, not by every command's start
        const std::string path = find_config(entry.name, "default");
        // a named json: items() refers to it, and a temporary would be gone before the loop body (C++20)
        const json defaults = shown.check_config(read_json_file(path), path);
        for (const auto& [k, v] : defaults.items()) shown.set_default(k, v);
      } catch (const std::exception&) {
        shown = task_schema(*task);
      }
    }
    shown.add_flags(sub, *flags, verb.skip);
    sub->footer("Defaults in [ ] are what a run without --config uses: the built-in values" +
                std::string(has_default ? " with apps/configs/" + entry.name + "/default.json applied" : "") +
                ". --config NAME takes them from apps/configs/" + entry.name + "/NAME.json instead; flags override both.");
    if (verb.extra_flags) verb.extra_flags(sub);
    sub->callback([flags, config, config_opt, name = entry.name, run = verb.run] {
      if (config_opt->count() > 0 && config->empty())  // `--config ""` must not fall back to the defaults
        throw std::invalid_argument("--config needs a config name (" + name + "'s: " + config_list(name) +
                                    ") or a path to a .json file; it was given an empty text");
      TaskInvocation inv;
      inv.task = make_task(name);
      inv.settings = resolve_task_settings(*inv.task, *config, *flags, &inv.config_source);
      run(inv);
    });
  }
}

}  // namespace nlapp
