// `normlab reproduce <task>`: every norm variant × seeds of a task's experiment, run by the experiment
// runner (engine/experiment.h: finished runs are not redone, an interrupted one resumes from its
// checkpoint); writes results.json, results.md (the paper's column beside ours) and SVG curves into
// --out, rewritten after every run.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/command_registry.h"
#include "common/output_listing.h"
#include "engine/experiment.h"
#include "engine/task_cli.h"
#include "nn/norm/factory.h"
#include "report/atomic_file.h"
#include "report/markdown_table.h"
#include "report/plot_svg.h"

namespace nlapp {
namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;

struct ReproduceArgs {
  int seeds = 1;
  std::vector<std::string> variants;  ///< empty: the LayerNorm family of Xu et al. that the task's --norm takes
  std::string out;
};

// The task's --norm choices (the factory registry's list that the task offers).
std::vector<std::string> task_norm_choices(const Task& task) {
  for (const auto& o : task.settings())
    if (o.key == "norm") return o.choices;
  throw std::invalid_argument("reproduce " + task.info().name + ": the task has no --norm setting, so it has no norm "
                              "variants to run");
}

// The variants to run: checked against the task's --norm choices (names are canonical: "ln-g" -> "lng");
// lng / groupnorm need --groups > 1, else they are layernorm itself.
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

// "lng, groupnorm: G = 8 groups. " when a variant takes --groups, else "".
std::string grouped_note(const std::vector<std::string>& variants, const json& settings) {
  std::string names;
  for (const auto& v : variants) {
    const auto& keys = nl::norm_option_keys(v);
    if (std::find(keys.begin(), keys.end(), "groups") != keys.end()) names += (names.empty() ? "" : ", ") + v;
  }
  return names.empty() ? "" : names + ": G = " + settings.value("groups", json(1)).dump() + " groups. ";
}

// results.json, results.md and the two SVG charts from the records so far.
void write_results(TaskInvocation& inv, const ReproduceArgs& a, const fs::path& out, const std::vector<RunRecord>& all) {
  Task& task = *inv.task;
  const auto& info = task.info();
  std::string data;
  json runs = json::array();
  for (const auto& o : all) {
    if (o.status == RunStatus::Pending || o.status == RunStatus::Failed) continue;
    if (data.empty()) data = o.data();
    json j = o.result;
    j["norm"] = o.run.tags["variant"];
    j["seed"] = o.run.tags["seed"];
    j["diverged"] = o.status == RunStatus::Diverged;
    runs.push_back(j);
  }
  write_file_atomic(out / "results.json", json{{"task", info.name}, {"data", data}, {"config", inv.config_source}, {"seeds", a.seeds},
                                               {"metric", info.metric}, {"paper_source", info.paper}, {"runs", runs}}
                                                  .dump(2) + "\n");

  std::vector<std::vector<std::string>> rows;
  std::vector<Series> loss, curve;
  for (const auto& v : a.variants) {
    std::vector<double> test, valid;
    int diverged = 0, n = 0;
    double ips = 0;
    for (const auto& o : all) {
      if (o.run.tags["variant"] != v || o.status == RunStatus::Pending || o.status == RunStatus::Failed) continue;
      ++n;
      if (o.status == RunStatus::Diverged) {
        ++diverged;
        continue;
      }
      test.push_back(o.test_metric(info.reported_metric()));
      valid.push_back(o.result.value("best_valid", std::nan("")));
      ips += o.result.value("items_per_s", 0.0);
      if (o.run.tags["seed"] == 1) {
        Series sl{v, {}, {}}, sc{v, {}, {}};
        for (const auto& p : o.result["train_loss"]) sl.x.push_back(p[0].get<double>()), sl.y.push_back(p[1].get<double>());
        for (const auto& p : o.result["valid_curve"]) sc.x.push_back(p[0].get<double>()), sc.y.push_back(p[1].get<double>());
        loss.push_back(sl);
        curve.push_back(sc);
      }
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
     << (inv.config_source.empty() ? "built-in defaults" : inv.config_source) << " and flags (each run's config.json).\n"
     << grouped_note(a.variants, s) << "Paper column: " << info.paper << "; comparable only in the paper's setting. Results differ in the last digits "
     << "between CPUs (different BLAS kernels); one machine repeats exactly.\n\n";
  std::vector<std::string> head{"variant", metric_label("test", info.reported_metric()), "best " + metric_label("valid", info.metric)};
  for (const auto& [title, value] : task.paper_columns(s)) head.push_back(title);
  head.push_back("diverged");
  head.push_back(info.unit + "/s");
  std::vector<Align> align(head.size(), Align::Right);
  align[0] = Align::Left;
  md << markdown_table(head, rows, align);
  write_file_atomic(out / "results.md", md.str());
  write_line_chart(out / "train_loss.svg", {"Training loss (" + data + ", seed 1)", "update", "loss (mean over the log interval)", true},
                   loss);
  write_line_chart(out / ("valid_" + info.metric + ".svg"), {"Validation " + info.metric + " (seed 1)", "epoch", info.metric}, curve);
}

void run(TaskInvocation& inv, const ReproduceArgs& args) {
  ReproduceArgs a = args;
  a.variants = checked_variants(*inv.task, inv.settings, args.variants);
  const auto& info = inv.task->info();
  ExperimentOptions opt;
  opt.out = a.out.empty() ? "results/" + info.name : a.out;
  json base = inv.settings;
  for (const char* k : {"out", "resume", "device"}) base.erase(k);  // set per run by the runner
  std::vector<ExperimentRun> runs;
  for (int seed = 1; seed <= a.seeds; ++seed)
    for (const auto& v : a.variants) {
      json s = base;
      s["norm"] = v;
      s["seed"] = seed;
      runs.push_back({v + "-seed" + std::to_string(seed), info.name, inv.config_source, s, {{"variant", v}, {"seed", seed}}});
    }
  opt.on_update = [&](const std::vector<RunRecord>& rec) { write_results(inv, a, opt.out, rec); };
  const auto rec = run_experiment(runs, opt);
  std::ifstream md(opt.out / "results.md");
  std::cout << "\n" << md.rdbuf() << "\n" << written_listing(opt.out) << "\n";
  if (const std::string e = failed_runs_error(rec); !e.empty()) throw std::runtime_error(e);
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
    sub->add_option("--out", a->out, "Results folder (default results/<task>)");
  };
  verb.run = [a](TaskInvocation& inv) { run(inv, *a); };
  add_task_subcommands(rep, verb);
}

CommandRegistrar reg{{"reproduce", 20, setup}};
}  // namespace
}  // namespace nlapp
