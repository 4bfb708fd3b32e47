// `normlab reproduce ni2024-capacity`: Ni et al. 2024's capacity experiment (the slides' Figure
// panels a-b; ../shared/docs/ni-pn-details.md §5.1): training accuracy on random labels (MNIST-RL,
// CIFAR-10-RL) of a linear classifier, a linear network, an LN-Net (LayerNorm) and LN-Nets with LN-G
// for each group count G of --groups-list, all of the task lnnet's shape (--width, --depth). Writes
// results.json, results.md and train_acc_vs_groups.svg into --out. Panels c-d (the Hessian measure
// against G) are not computed here: see docs/ni2024-capacity.md for the hook.
//
// It is a subcommand of `normlab reproduce` (registered after it, order 21) rather than a sweep flag of
// the generic variants × seeds loop, because its rows are different models (depth 0, norm none, LN-G
// with G), not norm names.
#include <cmath>
#include <iostream>
#include <sstream>

#include "common/command_registry.h"
#include "engine/task_cli.h"
#include "engine/task_registry.h"
#include "engine/trainer.h"
#include "report/atomic_file.h"
#include "report/markdown_table.h"
#include "report/plot_svg.h"

namespace nlapp {
namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;

struct CapacityArgs {
  std::string config = "capacity-cpu";
  std::map<std::string, std::string> flags;
  std::vector<std::string> datasets{"mnist", "cifar10"};
  std::vector<int64_t> groups{1, 2, 4, 8, 16, 32, 64, 128};
  int seeds = 1;
  std::string out = "results/ni2024-capacity";
};

/// One model of the comparison: its row label and the settings it changes.
struct Model {
  std::string label;
  json change;
  int64_t groups = 0;  ///< G of an LN-Net row (1 = LayerNorm), 0 for the linear baselines
};

std::vector<Model> models(const CapacityArgs& a) {
  std::vector<Model> m{{"linear classifier", {{"depth", 0}, {"norm", "none"}}, 0},
                       {"linear network", {{"norm", "none"}}, 0}};
  for (int64_t g : a.groups)
    m.push_back(g == 1 ? Model{"LN-Net, LN (G = 1)", {{"norm", "layernorm"}}, 1}
                       : Model{"LN-Net, LN-G (G = " + std::to_string(g) + ")", {{"norm", "lng"}, {"groups", g}}, g});
  return m;
}


void run(const CapacityArgs& a) {
  std::unique_ptr<Task> task = make_task("lnnet");
  std::string source;
  const json base = resolve_task_settings(*task, a.config, a.flags, &source);
  if (a.datasets.size() > 1 && !base.at("data").get<std::string>().empty())
    throw std::invalid_argument("--data names one folder but --datasets lists " + std::to_string(a.datasets.size()) +
                                "; pass one dataset with --datasets, or drop --data to use ../shared/data/<dataset>");
  const int64_t width = base.at("width").get<int64_t>();
  for (int64_t g : a.groups)
    if (g < 1 || width % g != 0)
      throw std::invalid_argument("--groups-list: G = " + std::to_string(g) + " does not divide --width " +
                                  std::to_string(width) + "; use divisors of the width (e.g. powers of two for 256)");
  fs::create_directories(a.out);
  json runs = json::array();
  std::ostringstream md;
  std::vector<Series> curves;
  md << "# Ni et al. 2024: capacity of LN-Nets on random labels (slides' Figure, panels a-b)\n\n"
     << "Training accuracy (%) of the weights with the best training accuracy, evaluated on the whole training "
        "subset in eval mode; mean ± std over " << a.seeds << " seed(s). Shape: width " << width << ", depth "
     << base.at("depth") << " (Linear -> norm blocks, no activation) + a Linear read-out; optimizer "
     << base.at("optimizer").get<std::string>() << " lr " << base.at("lr") << ", batch " << base.at("batch_size") << ", "
     << base.at("max_epoch") << " epoch(s), fixed lr. Settings: " << (source.empty() ? "built-in defaults" : source)
     << " and flags. The paper trains 150 epochs on the full sets with lr halved every 20 epochs "
        "(notes §5.1) and gives no numbers, only the figure. Panels c-d (Hessian measure vs G): not here, see "
        "docs/ni2024-capacity.md.\n\n";
  for (const auto& ds : a.datasets) {
    std::vector<std::vector<std::string>> rows;
    Series curve{ds + "-RL", {}, {}};
    std::string data;
    for (const auto& m : models(a)) {
      std::vector<double> train, test;
      double epochs = 0;
      for (int seed = 1; seed <= a.seeds; ++seed) {
        json s = base;
        s["dataset"] = ds;
        s.update(m.change);
        s["seed"] = seed;
        std::string tag = m.groups ? "G" + std::to_string(m.groups) : m.change.contains("depth") ? "linear-classifier" : "linear-network";
        s["out"] = (fs::path(a.out) / "runs" / (ds + "-" + tag + "-seed" + std::to_string(seed))).string();
        task->setup(s);
        data = task->data_summary();
        RunResult r = Trainer(*task, s).run();
        train.push_back(r.test.at("train_acc"));
        test.push_back(r.test.at("test_acc"));
        epochs = r.epochs;
        json j = r.to_json();
        j["dataset"] = ds;
        j["model"] = m.label;
        j["groups"] = m.groups;
        runs.push_back(j);
        write_file_atomic(fs::path(a.out) / "results.json",
                          json{{"experiment", "ni2024-capacity"}, {"config", source}, {"runs", runs}}.dump(2) + "\n");
      }
      rows.push_back({m.label, m.groups ? std::to_string(width / m.groups) : "—", format_mean_std(train),
                      format_mean_std(test), format_fixed(epochs)});
      if (m.groups) {
        double mean = 0;
        for (double v : train) mean += v / (double)train.size();
        curve.x.push_back(std::log2((double)m.groups));
        curve.y.push_back(mean);
      }
    }
    curves.push_back(curve);
    md << "## " << ds << "-RL\n\nData: " << data << ".\n\n"
       << markdown_table({"model", "group size", "train acc %", "test acc % (random labels: chance)", "epochs"}, rows,
                         {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right})
       << "\n";
  }
  write_file_atomic(fs::path(a.out) / "results.md", md.str());
  write_line_chart(fs::path(a.out) / "train_acc_vs_groups.svg",
                   {"LN-Net training accuracy on random labels vs groups (seed mean)", "log2 G (G = 1: LayerNorm)",
                    "train acc %"},
                   curves);
  std::cout << "\n" << md.str() << "written: " << a.out << "/results.{json,md}, train_acc_vs_groups.svg\n";
}

void setup(CLI::App& app) {
  CLI::App* rep = app.get_subcommand("reproduce");
  auto* sub = rep->add_subcommand("ni2024-capacity",
                                  "Ni et al. 2024 capacity: training accuracy on MNIST-RL / CIFAR-10-RL of linear "
                                  "baselines, LN-Net and LN-G against G (task lnnet)");
  sub->allow_extras(false);
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
  sub->add_option("--out", a->out, "Results folder")->capture_default_str();
  sub->callback([a] { run(*a); });
}

CommandRegistrar reg{{"reproduce-ni2024-capacity", 21, setup}};
}  // namespace
}  // namespace nlapp
