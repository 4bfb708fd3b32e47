#include "engine/experiment.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "distributed/world.h"
#include "engine/task_cli.h"
#include "engine/task_registry.h"
#include "engine/trainer.h"
#include "report/atomic_file.h"
#include "report/progress.h"

namespace nlapp {
using json = nlohmann::json;
namespace fs = std::filesystem;

std::string status_name(RunStatus s) {
  switch (s) {
    case RunStatus::Pending: return "pending";
    case RunStatus::Done: return "done";
    case RunStatus::Diverged: return "diverged";
    case RunStatus::Failed: return "failed";
    case RunStatus::NotRun: return "not run";
  }
  return "?";
}

double RunRecord::test_metric(const std::string& metric) const {
  if (status != RunStatus::Done || !result.contains("test")) return std::nan("");
  const json& t = result["test"];
  return t.contains(metric) && t[metric].is_number() ? t[metric].get<double>() : std::nan("");
}

std::string RunRecord::data() const { return result.is_object() ? result.value("data", "") : ""; }

TaskFactory registry_task_factory() {
  return [](const std::string& name) -> std::unique_ptr<Task> {
    for (const auto& e : task_registry())
      if (e.name == name) return e.make();
    return nullptr;
  };
}

json experiment_settings(const Task& task, const ExperimentRun& run, const ExperimentOptions& opt) {
  const OptionSchema schema = task_schema(task);
  const std::string where = "run '" + run.label + "' (task " + run.task + ")";
  json s = resolve_task_settings(task, run.config, {});
  const json over = schema.check_config(run.overrides, where + " overrides"),
             budget = schema.check_config(opt.budget, where + " budget");
  for (const auto& [k, v] : over.items()) s[k] = v;
  for (const auto& [k, v] : budget.items()) s[k] = v;
  for (const auto& [k, text] : opt.set)
    if (const OptionSpec* spec = schema.find(k)) s[k] = parse_flag_value(*spec, text);
  s["out"] = (opt.out / "runs" / run.label).string();
  s["resume"] = true;
  return s;
}

namespace {
// "data-bin/multi30k/" -> "multi30k": where a corpus lies is not part of the experiment.
std::string data_folder_name(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return fs::path(path).filename().string();
}
}  // namespace

bool same_experiment(const json& a, const json& b, const json& defaults) {
  static const std::set<std::string> volatile_keys = {"out", "resume", "overwrite", "quiet", "threads", "detect_anomaly", "device"};
  auto strip = [&](json j, const json& other) {
    if (!j.is_object()) return j;
    for (const auto& k : volatile_keys) j.erase(k);
    if (j.contains("data") && j["data"].is_string()) j["data"] = data_folder_name(j["data"].get<std::string>());
    if (other.is_object())  // a key only the other side has: this side ran with the default
      for (const auto& [k, v] : other.items())
        if (!j.contains(k) && defaults.contains(k) && !volatile_keys.count(k)) j[k] = defaults[k];
    return j;
  };
  return strip(a, b) == strip(b, a);
}

namespace {

// The run's earlier results.json when it belongs to the same experiment; null otherwise.
json finished_result(const fs::path& folder, const json& settings) {
  const fs::path p = folder / "results.json";
  std::ifstream in(p);
  if (!in) return nullptr;
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("settings") || !same_experiment(j["settings"], settings)) return nullptr;
  return j;
}

// A task and the key of its data (the settings without the run-specific ones), for the check at the start.
std::string data_key(const std::string& task, json s) {
  for (const char* k : {"norm", "seed", "out", "resume", "overwrite", "quiet", "threads", "max_update", "max_epoch", "C", "device"})
    s.erase(k);
  return task + " " + s.dump();
}

}  // namespace

std::string data_parallel_suffix(const json& settings) {
  if (!settings.is_object() || !settings.value("distributed", false)) return "";
  return "+ddp" + std::to_string(nl::dist::world(settings.value("dist_timeout", 600.0)).world_size());
}

bool reports_here(const std::vector<RunRecord>& records) {
  if (records.empty() || !records.front().other_rank) return true;
  if (const std::string e = failed_runs_error(records); !e.empty()) throw std::runtime_error(e);
  return false;
}

std::vector<RunRecord> run_experiment(const std::vector<ExperimentRun>& runs_in, const ExperimentOptions& opt) {
  std::ostringstream silent;  // the log of a rank > 0 of a --distributed experiment
  bool other_rank = false;    // a rank > 0 of a --distributed experiment: trains, writes nothing
  auto log_stream = [&]() -> std::ostream& { return other_rank ? silent : opt.log ? *opt.log : std::cout; };
  const TaskFactory make = opt.make_task ? opt.make_task : registry_task_factory();
  std::vector<ExperimentRun> runs = runs_in;  // data-parallel runs move to their own registry column
  std::set<std::string> labels;
  for (const auto& r : runs)
    if (r.label.empty() || !labels.insert(r.label).second)
      throw std::invalid_argument("experiment: run label '" + r.label + "' is " + (r.label.empty() ? "empty" : "used twice") +
                                  "; every run needs its own label (its folder name)");

  // One task object per task name; settings of every run resolved before any training.
  std::map<std::string, std::unique_ptr<Task>> tasks;
  std::vector<RunRecord> rec(runs.size());
  std::vector<json> settings(runs.size());
  std::vector<bool> registry_conflict(runs.size(), false);
  auto use_registry = [&](size_t i) { return !opt.registry.empty() && runs[i].registry.has_value(); };
  // A finished run's record, written once (not over a record of other settings).
  auto record = [&](size_t i) {
    if (opt.dry || other_rank || !use_registry(i) || registry_conflict[i] || rec[i].from_registry || !rec[i].result.is_object()) return;
    const fs::path p = write_registry_record(opt.registry, *runs[i].registry, make_registry_record(rec[i].result, *runs[i].registry));
    log_stream() << "  registry: " << p.string() << "\n";
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    rec[i].run = runs[i];
    rec[i].folder = opt.out / "runs" / runs[i].label;
    auto it = tasks.find(runs[i].task);
    if (it == tasks.end()) it = tasks.emplace(runs[i].task, make(runs[i].task)).first;
    if (!it->second)
      throw std::invalid_argument("experiment run '" + runs[i].label + "': unknown task '" + runs[i].task +
                                  "' (normlab train --help lists the tasks)");
    settings[i] = experiment_settings(*it->second, runs[i], opt);
    if (const std::string ddp = data_parallel_suffix(settings[i]); !ddp.empty()) {
      if (runs[i].registry && !runs[i].registry->column.ends_with(ddp)) runs[i].registry->column += ddp;
      rec[i].run = runs[i];
      if (nl::dist::world().rank() != 0) other_rank = true;
    }
    json done;
    if (use_registry(i)) {
      const json r = read_registry_record(opt.registry, *runs[i].registry);
      if (!r.is_null() && same_experiment(r["settings"], settings[i], task_schema(*it->second).defaults())) {
        done = r;
        rec[i].from_registry = true;
      } else if (!r.is_null()) {
        registry_conflict[i] = true;
        log_stream() << "  registry: " << (opt.registry / runs[i].registry->relative_path()).string()
            << " holds a run with other settings; it is kept, and run '" << runs[i].label
            << "' is not recorded there (delete that record to replace it)\n";
      }
    }
    if (done.is_null()) done = finished_result(rec[i].folder, settings[i]);
    if (!done.is_null()) {
      rec[i].reused = true;
      rec[i].result = done;
      const bool div = done.value("diverged", false);
      rec[i].status = div ? RunStatus::Diverged : RunStatus::Done;
      if (div) rec[i].message = done.value("error", "");
    }
  }
  for (size_t i = 0; i < runs.size(); ++i)
    if (rec[i].reused) record(i);
  for (const auto& [k, text] : opt.set) {
    // What the experiment itself sets per run (its variables: the norm, the seed, the data, the batch of a
    // batch-size table; the run folder) is not for --set: it would make every run the same one.
    bool per_run = k == "seed" || k == "out" || k == "resume" || k == "overwrite";
    for (const auto& r : runs) per_run = per_run || r.overrides.contains(k);
    if (per_run)
      throw std::invalid_argument("--set " + k + "=" + text + ": '" + k + "' is set by the experiment for each of its "
                                  "runs (what its runs vary, their data, seed and folder), so --set cannot change it; "
                                  "use the command's own options (--seeds, --tasks / --variants, --data-root, --out)");
    bool known = false;
    for (const auto& [name, t] : tasks) known = known || (t && task_schema(*t).find(k));
    if (!known)
      throw std::invalid_argument("--set " + k + "=" + text + ": no task of this experiment has a setting '" + k +
                                  "' (normlab train TASK --help lists a task's settings, with '_' written as '-')");
  }
  if (opt.dry) {
    for (auto& r : rec)
      if (r.status == RunStatus::Pending) r.status = RunStatus::NotRun;
    if (opt.on_update) opt.on_update(rec);
    return rec;
  }
  // Every data set the pending runs need, loaded once now: a missing one stops the experiment here.
  std::set<std::string> checked;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (rec[i].status != RunStatus::Pending || !checked.insert(data_key(runs[i].task, settings[i])).second) continue;
    try {
      tasks.at(runs[i].task)->setup(settings[i]);
    } catch (const std::exception& e) {
      throw std::runtime_error("experiment run '" + runs[i].label + "' (task " + runs[i].task +
                               (runs[i].config.empty() ? "" : ", config " + runs[i].config) + "): " + e.what());
    }
  }

  size_t reused = 0;
  for (const auto& r : rec) reused += r.reused;
  log_stream() << "experiment: " << runs.size() << " run(s) into " << opt.out.string() << "; " << reused << " already finished\n";
  if (opt.on_update && !other_rank) opt.on_update(rec);

  const auto t0 = std::chrono::steady_clock::now();
  size_t trained = 0, pending = 0;
  for (const auto& r : rec) pending += r.status == RunStatus::Pending;
  double trained_s = 0;
  size_t index = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    ++index;
    if (rec[i].status != RunStatus::Pending) continue;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double eta = trained ? trained_s / (double)trained * (double)(pending - trained) : std::nan("");
    log_stream() << "[run " << index << " of " << runs.size() << "] " << runs[i].label << "  elapsed " << format_hms(elapsed)
        << "  eta " << format_hms(eta) << "\n"
        << std::flush;
    Task& task = *tasks.at(runs[i].task);
    const json& s = settings[i];
    const auto r0 = std::chrono::steady_clock::now();
    try {
      task.setup(s);
      Trainer(task, s).run();  // writes <folder>/results.json (rank 0 of a --distributed run)
      rec[i].result = other_rank ? json::object() : json::parse(std::ifstream(rec[i].folder / "results.json"));
      rec[i].status = RunStatus::Done;
    } catch (const TrainingDiverged& e) {
      rec[i].status = RunStatus::Diverged;
      rec[i].message = e.what();
      // The Trainer's record of the divergence (written by rank 0 of a --distributed run).
      rec[i].result = other_rank ? json::object() : json::parse(std::ifstream(rec[i].folder / "results.json"));
      log_stream() << "  " << runs[i].label << " diverged: " << e.what() << "\n";
    } catch (const std::exception& e) {
      rec[i].status = RunStatus::Failed;
      rec[i].message = e.what();
      log_stream() << "  " << runs[i].label << " failed: " << e.what() << "\n";
    }
    rec[i].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
    if (rec[i].status == RunStatus::Done || rec[i].status == RunStatus::Diverged) record(i);
    trained_s += rec[i].seconds;
    ++trained;
    if (opt.on_update && !other_rank) opt.on_update(rec);
  }
  size_t failed = 0;
  for (const auto& r : rec) failed += r.status == RunStatus::Failed;
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& r : rec) r.other_rank = other_rank;
  log_stream() << "experiment: " << trained << " run(s) trained in " << format_hms(total) << ", " << reused << " reused"
      << (failed ? ", " + std::to_string(failed) + " failed" : "") << "\n";
  return rec;
}

std::string failed_runs_error(const std::vector<RunRecord>& records) {
  std::string msg;
  size_t n = 0;
  for (const auto& r : records)
    if (r.status == RunStatus::Failed) {
      ++n;
      msg += "\n  " + r.run.label + ": " + r.message;
    }
  if (!n) return "";
  return std::to_string(n) + " run(s) failed (the tables show them as failed; rerun the same command to retry them):" + msg;
}

nlohmann::json records_json(const std::vector<RunRecord>& records) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : records) {
    nlohmann::json j = r.result.is_null() ? nlohmann::json::object() : r.result;
    j["label"] = r.run.label;
    j["tags"] = r.run.tags;
    j["status"] = status_name(r.status);
    if (!r.message.empty()) j["message"] = r.message;
    runs.push_back(j);
  }
  return runs;
}

void keep_column_precision(std::vector<ExperimentRun>& runs, ExperimentOptions lookup) {
  std::ostringstream quiet;  // the look-ups' progress lines are not the command's
  lookup.dry = true;
  lookup.on_update = nullptr;
  lookup.log = &quiet;
  ExperimentOptions bf16 = lookup;
  bf16.budget["bf16"] = true;
  const std::vector<RunRecord> f32 = run_experiment(runs, lookup), b16 = run_experiment(runs, bf16);
  auto column = [&](size_t i) {
    const auto it = runs[i].tags.find("column");
    return it != runs[i].tags.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::map<std::string, int> lead;  // column -> finished bfloat16 runs minus finished float32 runs
  for (size_t i = 0; i < runs.size(); ++i)
    lead[column(i)] += (b16[i].status == RunStatus::Done) - (f32[i].status == RunStatus::Done);
  for (size_t i = 0; i < runs.size(); ++i)
    if (lead[column(i)] > 0) runs[i].overrides["bf16"] = true;
}

}  // namespace nlapp
