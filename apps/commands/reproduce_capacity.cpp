// `normlab reproduce ni2024-capacity`: Ni et al. 2024's capacity experiment (the slides' Figure;
// ../shared/docs/ni-pn-details.md §5.1): training accuracy on random labels (MNIST-RL, CIFAR-10-RL) of a
// linear classifier, a linear network, an LN-Net (LayerNorm) and LN-Nets with LN-G for each group count G
// of --groups-list, all of the task lnnet's shape (--width, --depth) (panels a-b), and the Hessian
// measure H of each trained model against G (panels c-d; nn/theory/ln_net_hessian.h: mean over the first
// training batch of the sum over norm layers of the closed-form H). Writes results.json, results.md (one
// table per dataset with both measures), train_acc_vs_groups.svg and hessian_vs_groups.svg into --out.
// Resumable: every run starts with --resume (a finished run is evaluated again, an interrupted one goes on).
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
#include "engine/trainer_settings.h"
#include "nn/theory/ln_net_hessian.h"
#include "report/atomic_file.h"
#include "report/markdown_table.h"
#include "report/plot_svg.h"
#include "tasks/image_data.h"

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


// The slides' two claims checked on one data set's seed means (rows of models(): the two linear
// baselines first, then the LN-Net rows): "LN-Net above the linear baselines" (LN, G = 1, against the
// better baseline) and "LN-G above LN" (the best G > 1). Each line says "holds" or "does not hold" with
// the numbers; a claim whose rows were not run says so.
std::string claims(const std::vector<Model>& ms, const std::vector<double>& mean) {
  const double lin = std::max(mean[0], mean[1]);
  const std::string lin_label = mean[0] >= mean[1] ? ms[0].label : ms[1].label;
  int ln = -1, best_g = -1;
  for (size_t i = 2; i < ms.size(); ++i) {
    if (ms[i].groups == 1) ln = (int)i;
    else if (best_g < 0 || mean[i] > mean[(size_t)best_g]) best_g = (int)i;
  }
  auto num = [&](int i) { return ms[(size_t)i].label + " " + format_fixed(mean[(size_t)i]) + "%"; };
  std::ostringstream o;
  o << "Claims (train acc, seed means):\n";
  if (ln < 0) {
    o << "- LN-Net above the linear baselines: not run (add G = 1 to --groups-list)\n";
  } else {
    o << "- LN-Net above the linear baselines: " << (mean[(size_t)ln] > lin ? "holds" : "does not hold") << " ("
      << num(ln) << " vs " << lin_label << " " << format_fixed(lin) << "%)\n";
  }
  if (ln < 0 || best_g < 0) {
    o << "- LN-G above LN: not run (--groups-list needs 1 and some G > 1)\n";
  } else {
    o << "- LN-G above LN: " << (mean[(size_t)best_g] > mean[(size_t)ln] ? "holds" : "does not hold") << " (best "
      << num(best_g) << " vs " << num(ln) << ")\n";
  }
  return o.str();
}

// The Hessian measure of the trained (best-training-accuracy) weights on the first training batch.
nl::lntheory::LnNetHessian hessian_of(Trainer& trainer, const Task& task) {
  auto* net = dynamic_cast<nl::LnNet*>(&trainer.model());
  if (!net) throw std::logic_error("reproduce ni2024-capacity: the lnnet task did not build an LnNet");
  net->to(nl::Device::cpu());  // the closed-form Hessian reads host memory; the run (any --device) is over
  const auto batch = task.train_batch(0, 0);
  return nl::lntheory::ln_net_hessian(*net, static_cast<const ImageBatch&>(*batch).images);
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
  std::vector<Series> curves, h_curves;
  md << "# Ni et al. 2024: capacity of LN-Nets on random labels (slides' Figure, panels a-d)\n\n"
     << "Training accuracy (%) of the weights with the best training accuracy, evaluated on the whole training "
        "subset in eval mode; mean ± std over " << a.seeds << " seed(s). Shape: width " << width << ", depth "
     << base.at("depth") << " (Linear -> norm blocks, no activation) + a Linear read-out; optimizer "
     << base.at("optimizer").get<std::string>() << " lr " << base.at("lr") << ", batch " << base.at("batch_size") << ", "
     << base.at("max_epoch") << " epoch(s), " << schedule_summary(base) << ". Settings: "
     << (source.empty() ? "built-in defaults" : source)
     << " and flags. The paper trains 150 epochs on the full sets with lr halved every 20 epochs "
        "(notes §5.1) and gives no numbers, only the figure.\n\n"
     << "H (panels c-d): the Hessian measure H(f; x) = Σᵢ ‖∂²yᵢ/∂x²‖²_F of each norm layer at its input, by the "
        "closed form (notes §2, with eps and the trained gain), summed over the norm layers and averaged over the "
        "first training batch (" << base.at("batch_size") << " images) for the same weights; 0 for the linear models. "
        "How the paper averages H was not retrieved (notes §2: this is the suggested reading).\n\n";
  for (const auto& ds : a.datasets) {
    std::vector<std::vector<std::string>> rows;
    Series curve{ds + "-RL", {}, {}}, h_curve{ds + "-RL", {}, {}};
    std::string data;
    const std::vector<Model> ms = models(a);
    std::vector<double> train_means;
    for (const auto& m : ms) {
      std::vector<double> train, test, hess;
      double epochs = 0;
      for (int seed = 1; seed <= a.seeds; ++seed) {
        json s = base;
        s["dataset"] = ds;
        s.update(m.change);
        s["seed"] = seed;
        std::string tag = m.groups ? "G" + std::to_string(m.groups) : m.change.contains("depth") ? "linear-classifier" : "linear-network";
        s["out"] = (fs::path(a.out) / "runs" / (ds + "-" + tag + "-seed" + std::to_string(seed))).string();
        s["resume"] = true;  // a finished run is evaluated again from its checkpoints, an interrupted one continues
        task->setup(s);
        data = task->data_summary();
        Trainer trainer(*task, s);
        RunResult r = trainer.run();
        const nl::lntheory::LnNetHessian h = hessian_of(trainer, *task);
        train.push_back(r.test.at("train_acc"));
        test.push_back(r.test.at("test_acc"));
        hess.push_back(h.total);
        epochs = r.epochs;
        json j = r.to_json();
        j["dataset"] = ds;
        j["model"] = m.label;
        j["groups"] = m.groups;
        j["hessian"] = {{"total", h.total}, {"per_layer", h.per_layer}, {"samples", h.samples}};
        runs.push_back(j);
        write_file_atomic(fs::path(a.out) / "results.json",
                          json{{"experiment", "ni2024-capacity"}, {"config", source}, {"runs", runs}}.dump(2) + "\n");
      }
      double train_mean = 0;
      for (double t : train) train_mean += t / (double)train.size();
      train_means.push_back(train_mean);
      rows.push_back({m.label, m.groups ? std::to_string(width / m.groups) : "—", format_mean_std(train),
                      format_mean_std(test), format_mean_std(hess, 3), format_fixed(epochs)});
      if (m.groups) {
        double mean = 0, hmean = 0;
        for (size_t i = 0; i < train.size(); ++i) {
          mean += train[i] / (double)train.size();
          hmean += hess[i] / (double)hess.size();
        }
        curve.x.push_back(std::log2((double)m.groups));
        curve.y.push_back(mean);
        h_curve.x.push_back(std::log2((double)m.groups));
        h_curve.y.push_back(hmean);
      }
    }
    curves.push_back(curve);
    h_curves.push_back(h_curve);
    md << "## " << ds << "-RL\n\nData: " << data << ".\n\n"
       << markdown_table({"model", "group size", "train acc %", "test acc % (random labels: chance)", "H (Σ layers)",
                          "epochs"},
                         rows, {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right})
       << "\n" << claims(ms, train_means) << "\n";
  }
  write_file_atomic(fs::path(a.out) / "results.md", md.str());
  write_line_chart(fs::path(a.out) / "train_acc_vs_groups.svg",
                   {"LN-Net training accuracy on random labels vs groups (seed mean)", "log2 G (G = 1: LayerNorm)",
                    "train acc %"},
                   curves);
  write_line_chart(fs::path(a.out) / "hessian_vs_groups.svg",
                   {"LN-Net Hessian measure H on random labels vs groups (seed mean)", "log2 G (G = 1: LayerNorm)",
                    "H (sum over norm layers, mean over samples; log scale)", true},
                   h_curves);
  std::cout << "\n" << md.str() << "written: " << a.out
            << "/results.{json,md}, train_acc_vs_groups.svg, hessian_vs_groups.svg\n";
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
