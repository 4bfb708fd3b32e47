// `normlab reproduce <task>`: every norm variant × seeds of a task's experiment; writes results.json,
// results.md (the paper's column beside ours) and SVG curves into --out. Results are rewritten after
// every run, so a stopped reproduce loses at most the run in progress; --resume continues each run.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "common/command_registry.h"
#include "engine/task_cli.h"
#include "engine/trainer.h"
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


struct Outcome {
  std::string variant;
  int seed = 0;
  bool diverged = false;
  std::string error;
  RunResult r;
};

// "lng, groupnorm: G = 8 groups. " when a variant takes --groups, else "".
std::string grouped_note(const std::vector<std::string>& variants, const json& settings) {
  std::string names;
  for (const auto& v : variants) {
    const auto& keys = nl::norm_option_keys(v);
    if (std::find(keys.begin(), keys.end(), "groups") != keys.end()) names += (names.empty() ? "" : ", ") + v;
  }
  return names.empty() ? "" : names + ": G = " + settings.value("groups", json(1)).dump() + " groups. ";
}

void run(TaskInvocation& inv, const ReproduceArgs& args) {
  Task& task = *inv.task;
  ReproduceArgs a = args;
  a.variants = checked_variants(task, inv.settings, args.variants);
  const auto& info = task.info();
  const std::string out = a.out.empty() ? "results/" + info.name : a.out;
  fs::create_directories(out);
  json runs = json::array();
  std::vector<Outcome> all;
  std::string data;
  for (int seed = 1; seed <= a.seeds; ++seed)
    for (const auto& v : a.variants) {
      json s = inv.settings;
      s["norm"] = v;
      s["seed"] = seed;
      s["out"] = (fs::path(out) / "runs" / (v + "-seed" + std::to_string(seed))).string();
      task.setup(s);
      data = task.data_summary();
      Outcome o{v, seed, false, "", {}};
      try {
        o.r = Trainer(task, s).run();
      } catch (const TrainingDiverged& e) {
        o.diverged = true;
        o.error = e.what();
        std::cerr << "  " << v << " seed " << seed << " diverged: " << e.what() << "\n";
      }
      json j = o.diverged ? json{{"settings", s}} : o.r.to_json();
      j["norm"] = v;
      j["seed"] = seed;
      j["diverged"] = o.diverged;
      if (o.diverged) j["error"] = o.error;
      runs.push_back(j);
      all.push_back(std::move(o));
      write_file_atomic(fs::path(out) / "results.json",
                        json{{"task", info.name}, {"data", data}, {"config", inv.config_source}, {"seeds", a.seeds},
                             {"metric", info.metric}, {"paper_source", info.paper}, {"runs", runs}}
                            .dump(2) + "\n");
    }

  std::vector<std::vector<std::string>> rows;
  std::vector<Series> loss, curve;
  for (const auto& v : a.variants) {
    std::vector<double> test, valid;
    int diverged = 0, n = 0;
    double ips = 0;
    for (const auto& o : all) {
      if (o.variant != v) continue;
      ++n;
      if (o.diverged) {
        ++diverged;
        continue;
      }
      test.push_back(o.r.test.count(info.reported_metric()) ? o.r.test.at(info.reported_metric()) : std::nan(""));
      valid.push_back(o.r.best_valid);
      ips += o.r.items_per_s;
      if (o.seed == 1) {
        Series sl{v, {}, {}}, sc{v, {}, {}};
        for (auto& [u, l] : o.r.train_loss) sl.x.push_back((double)u), sl.y.push_back(l);
        for (auto& [e, m] : o.r.valid_curve) sc.x.push_back(e), sc.y.push_back(m);
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
     << "Data: " << data << ". " << s["max_epoch"] << " epoch(s)"
     << (s["max_update"].get<int64_t>() > 0 ? ", at most " + s["max_update"].dump() + " updates" : "") << ", " << a.seeds
     << " seed(s), " << s["optimizer"].get<std::string>() << " lr " << s["lr"] << "; test " << info.reported_metric()
     << " of " << info.test_source << ", mean ± std over seeds. Settings: "
     << (inv.config_source.empty() ? "built-in defaults" : inv.config_source) << " and flags (each run's config.json).\n"
     << grouped_note(a.variants, s) << "Paper column: " << info.paper << "; comparable only in the paper's setting. Results differ in the last digits "
     << "between CPUs (different BLAS kernels); one machine repeats exactly.\n\n";
  std::vector<std::string> head{"variant", "test " + info.reported_metric(), "best valid " + info.metric};
  for (const auto& [title, value] : task.paper_columns(s)) head.push_back(title);
  head.push_back("diverged");
  head.push_back(info.unit + "/s");
  std::vector<Align> align(head.size(), Align::Right);
  align[0] = Align::Left;
  md << markdown_table(head, rows, align);
  write_file_atomic(fs::path(out) / "results.md", md.str());
  write_line_chart(fs::path(out) / "train_loss.svg", {"Training loss (" + data + ", seed 1)", "update", "loss (mean over the log interval)", true},
                   loss);
  write_line_chart(fs::path(out) / ("valid_" + info.metric + ".svg"),
                   {"Validation " + info.metric + " (seed 1)", "epoch", info.metric}, curve);
  std::cout << "\n" << md.str() << "\nwritten: " << out << "/results.{json,md}, train_loss.svg, valid_" << info.metric
            << ".svg\n";
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
