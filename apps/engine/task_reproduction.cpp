#include "engine/task_reproduction.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/trainer.h"
#include "nn/norm/factory.h"
#include "report/atomic_file.h"
#include "report/markdown_table.h"
#include "report/plot_svg.h"

namespace nlapp {
using json = nlohmann::json;
namespace fs = std::filesystem;

std::string registry_column(const TaskInvocation& inv) {
  std::string col = inv.config_source.empty() ? "builtin" : fs::path(inv.config_source).stem().string();
  const json configured = resolve_task_settings(*inv.task, inv.config_source, {});  // the config's own data
  if (inv.settings.contains("data") && configured.contains("data") && inv.settings["data"] != configured["data"])
    col += "@" + fs::path(inv.settings["data"].get<std::string>()).lexically_normal().filename().string();
  // Mixed-precision runs form their own column (mnist/one-epoch+bf16/...), beside the float32 one.
  if (inv.settings.value("bf16", false)) col += "+bf16";
  if (inv.settings.value("tf32", false)) col += "+tf32";
  return col + data_parallel_suffix(inv.settings);  // a data-parallel run is another experiment (its global batch)
}

namespace {
// The task's --norm choices (the factory registry's list that the task offers).
std::vector<std::string> task_norm_choices(const Task& task) {
  for (const auto& o : task.settings())
    if (o.key == "norm") return o.choices;
  throw std::invalid_argument("reproduce " + task.info().name + ": the task has no --norm setting, so it has no norm "
                              "variants to run");
}

}  // namespace

std::vector<std::string> checked_variants(const Task& task, const json& settings, const std::vector<std::string>& asked) {
  const std::vector<std::string> choices = task_norm_choices(task);
  auto offered = [&](const std::string& n) { return std::find(choices.begin(), choices.end(), n) != choices.end(); };
  std::vector<std::string> v;
  if (asked.empty()) {
    for (const auto& n : nl::layernorm_family_names())
      if (offered(n)) v.push_back(n);
    return v;
  }
  for (const auto& a : asked) {
    const std::string n = nl::canonical_norm_name(a);
    if (!offered(n)) {
      std::string list;
      for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
      throw std::invalid_argument("--variants: task " + task.info().name + " has no norm '" + a + "' (its --norm takes: " +
                                  list + ")");
    }
    const auto& keys = nl::norm_option_keys(n);
    if (std::find(keys.begin(), keys.end(), "groups") != keys.end() && settings.value("groups", int64_t{1}) == 1)
      throw std::invalid_argument("--variants " + n + " with --groups 1 is layernorm itself: pass --groups G (G > 1 "
                                  "dividing the width of every norm slot, e.g. --groups 8 for d_model 256)");
    v.push_back(n);
  }
  return v;
}

namespace {
// "lng, groupnorm: G = 8 groups. " when a variant takes --groups, else "".
std::string grouped_note(const std::vector<std::string>& variants, const json& settings) {
  std::string names;
  for (const auto& v : variants) {
    const auto& keys = nl::norm_option_keys(v);
    if (std::find(keys.begin(), keys.end(), "groups") != keys.end()) names += (names.empty() ? "" : ", ") + v;
  }
  return names.empty() ? "" : names + ": G = " + settings.value("groups", json(1)).dump() + " groups. ";
}

bool unfinished(RunStatus s) { return s == RunStatus::Pending || s == RunStatus::Failed || s == RunStatus::NotRun; }

// The curves of seed 1 per variant.
void seed1_curves(const TaskReproduction& a, const std::vector<RunRecord>& all, std::vector<Series>& loss, std::vector<Series>& curve) {
  for (const auto& v : a.variants)
    for (const auto& o : all) {
      if (o.run.tags["variant"] != v || o.status != RunStatus::Done || o.run.tags["seed"] != 1) continue;
      Series sl{v, {}, {}}, sc{v, {}, {}};
      for (const auto& p : o.result["train_loss"]) sl.x.push_back(p[0].get<double>()), sl.y.push_back(p[1].get<double>());
      for (const auto& p : o.result["valid_curve"]) sc.x.push_back(p[0].get<double>()), sc.y.push_back(p[1].get<double>());
      loss.push_back(sl);
      curve.push_back(sc);
    }
}

std::string data_of(const std::vector<RunRecord>& all) {
  for (const auto& o : all)
    if (!unfinished(o.status) && !o.data().empty()) return o.data();
  return "";
}
}  // namespace

std::string format_task_reproduction(const TaskInvocation& inv, const TaskReproduction& a, const std::vector<RunRecord>& all) {
  Task& task = *inv.task;
  const auto& info = task.info();
  const std::string data = data_of(all);
  std::vector<std::vector<std::string>> rows;
  for (const auto& v : a.variants) {
    std::vector<double> test, valid;
    int diverged = 0, n = 0;
    double ips = 0;
    for (const auto& o : all) {
      if (o.run.tags["variant"] != v || unfinished(o.status)) continue;
      ++n;
      if (o.status == RunStatus::Diverged) {
        ++diverged;
        continue;
      }
      test.push_back(o.test_metric(info.reported_metric()));
      valid.push_back(o.result.value("best_valid", std::nan("")));
      ips += o.result.value("items_per_s", 0.0);
    }
    json sv = inv.settings;
    sv["norm"] = v;
    const int ok = n - diverged;
    std::vector<std::string> row{v, test.empty() ? "—" : format_mean_std(test), valid.empty() ? "—" : format_mean_std(valid)};
    for (const auto& [title, value] : task.paper_columns(sv)) row.push_back(format_fixed(value));
    row.push_back(diverged ? std::to_string(diverged) + "/" + std::to_string(n) : "0");
    row.push_back(ok ? format_fixed(ips / ok, 0) : "—");
    rows.push_back(row);
  }
  const json& s = inv.settings;
  std::ostringstream md;
  md << "# " << info.description << ": every norm variant\n\n"
     << "Data: " << (data.empty() ? "(no run finished yet)" : data) << ". " << s["max_epoch"] << " epoch(s)"
     << (s["max_update"].get<int64_t>() > 0 ? ", at most " + s["max_update"].dump() + " updates" : "") << ", " << a.seeds
     << " seed(s), " << s["optimizer"].get<std::string>() << " lr " << s["lr"] << "; test " << info.reported_metric()
     << " of " << info.test_source << ", mean ± std over seeds. Settings: "
     << (inv.config_source.empty() ? "built-in defaults" : "config `" + fs::path(inv.config_source).stem().string() + "`")
     << " and flags (each run's config.json).\n"
     << grouped_note(a.variants, s) << "Paper column: " << info.paper << "; comparable only in the paper's setting. Results differ in the last digits "
     << "between CPUs (different BLAS kernels); one machine repeats exactly.\n\n";
  std::vector<std::string> head{"variant", metric_label("test", info.reported_metric()), "best " + metric_label("valid", info.metric)};
  for (const auto& [title, value] : task.paper_columns(s)) head.push_back(title);
  head.push_back("diverged");
  head.push_back(info.unit + "/s");
  std::vector<Align> align(head.size(), Align::Right);
  align[0] = Align::Left;
  md << markdown_table(head, rows, align);
  return md.str();
}

std::vector<ExperimentRun> task_reproduction_runs(const TaskInvocation& inv, const TaskReproduction& a) {
  const auto& info = inv.task->info();
  const std::string column = registry_column(inv);
  json base = inv.settings;
  for (const char* k : {"out", "resume", "device"}) base.erase(k);  // set per run by the runner
  std::vector<ExperimentRun> runs;
  for (int seed = 1; seed <= a.seeds; ++seed)
    for (const auto& v : a.variants) {
      json s = base;
      s["norm"] = v;
      s["seed"] = seed;
      runs.push_back({v + "-seed" + std::to_string(seed), info.name, inv.config_source, s, {{"variant", v}, {"seed", seed}},
                      RegistryKey{info.name, column, v, seed}});
    }
  return runs;
}

void write_task_reproduction(const TaskInvocation& inv, const TaskReproduction& a, const fs::path& out,
                             const std::vector<RunRecord>& all, bool with_json) {
  Task& task = *inv.task;
  const auto& info = task.info();
  const std::string data = data_of(all);
  json runs = json::array();
  for (const auto& o : all) {
    if (unfinished(o.status)) continue;
    json j = o.result;
    j["norm"] = o.run.tags["variant"];
    j["seed"] = o.run.tags["seed"];
    j["diverged"] = o.status == RunStatus::Diverged;
    runs.push_back(j);
  }
  if (with_json)
    write_file_atomic(out / "results.json", json{{"task", info.name}, {"data", data}, {"config", fs::path(inv.config_source).stem().string()}, {"seeds", a.seeds},
                                               {"metric", info.metric}, {"paper_source", info.paper}, {"runs", runs}}
                                                  .dump(2) + "\n");

  write_file_atomic(out / "results.md", format_task_reproduction(inv, a, all));
  std::vector<Series> loss, curve;
  seed1_curves(a, all, loss, curve);
  write_line_chart(out / "train_loss.svg", {"Training loss (" + data + ", seed 1)", "update", "loss (mean over the log interval)", true},
                   loss);
  write_line_chart(out / ("valid_" + info.metric + ".svg"), {"Validation " + info.metric + " (seed 1)", "epoch", info.metric}, curve);
}


}  // namespace nlapp
