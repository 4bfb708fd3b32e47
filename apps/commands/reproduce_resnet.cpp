// `normlab reproduce ni2024-resnet`: Ni et al. 2024's "ResNet without ReLU on CIFAR-10" table (slides;
// ../shared/docs/ni-pn-details.md §5.2): task resnet-cifar once per norm (instancenorm, batchnorm,
// layernorm, groupnorm, lng) × seeds; results.md puts our train and test accuracy (of the best-validation
// weights) next to the slides' numbers, with the epochs and minutes actually run, and says whether the
// slides' order LN-G > GN > LN > BN > IN holds here. Resumable: a second call loads the runs that
// finished with the same settings (their results.json, first training time included) and continues
// interrupted ones from their checkpoint_last (--resume); a diverged run is a row saying so, and the other
// norms still run. A subcommand of `normlab reproduce` (order 22), as ni2024-capacity, because its table
// has two paper columns and the order check.
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "common/command_registry.h"
#include "engine/experiment.h"
#include "engine/task_cli.h"
#include "engine/task_registry.h"
#include "engine/trainer.h"
#include "engine/trainer_settings.h"
#include "nn/models/resnet_cifar.h"
#include "report/atomic_file.h"
#include "report/markdown_table.h"
#include "report/paper_numbers.h"
#include "tasks/resnet_cifar/resnet_cifar_task.h"

namespace nlapp {
namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;

struct ResNetArgs {
  std::string config = "cpu";
  std::map<std::string, std::string> flags;
  std::vector<std::string> norms{"instancenorm", "batchnorm", "layernorm", "groupnorm", "lng"};
  int seeds = 1;
  std::string out = "results/ni2024-resnet";
};


double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x / (double)v.size();
  return v.empty() ? std::nan("") : s;
}

// The run's results.json (written by the Trainer when it finished) if its settings are this run's
// (same_experiment); null otherwise.
json finished_run(const json& settings) {
  const fs::path file = fs::path(settings.at("out").get<std::string>()) / "results.json";
  if (!fs::exists(file)) return nullptr;
  json j = json::parse(std::ifstream(file), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("settings") || !same_experiment(j["settings"], settings)) return nullptr;
  return j;
}

// "holds" / "does not hold (…)" for the slides' order over the norms present, by `ours` (norm -> mean).
std::string order_check(const std::map<std::string, double>& ours) {
  const std::vector<std::string> order{"lng", "groupnorm", "layernorm", "batchnorm", "instancenorm"};
  std::vector<std::string> present;
  for (const auto& n : order)
    if (ours.count(n)) present.push_back(n);
  if (present.size() < 2) return "not checked (fewer than two of the five norms run)";
  for (size_t i = 0; i + 1 < present.size(); ++i)
    if (!(ours.at(present[i]) > ours.at(present[i + 1])))
      return "does not hold: " + present[i] + " " + format_fixed(ours.at(present[i])) + " is not above " + present[i + 1] + " " +
             format_fixed(ours.at(present[i + 1]));
  return "holds";
}

void run(const ResNetArgs& a) {
  std::unique_ptr<Task> task = make_task("resnet-cifar");
  std::string source;
  const json base = resolve_task_settings(*task, a.config, a.flags, &source);
  fs::create_directories(a.out);
  json runs = json::array();
  std::vector<std::vector<std::string>> rows;
  std::map<std::string, double> train_mean, test_mean;
  std::string data;
  double epochs = 0;
  for (const auto& norm : a.norms) {
    std::vector<double> train, test;
    double seconds = 0;
    std::string diverged;
    for (int seed = 1; seed <= a.seeds; ++seed) {
      json s = base;
      s["norm"] = norm;
      s["seed"] = seed;
      s["out"] = (fs::path(a.out) / "runs" / (norm + "-seed" + std::to_string(seed))).string();
      s["resume"] = true;  // an interrupted run continues from its checkpoint_last
      task->setup(s);
      data = task->data_summary();
      json j = finished_run(s);  // a finished run of the same settings is loaded, not trained or evaluated again
      try {
        if (j.is_null()) j = Trainer(*task, s).run().to_json();
        if (j.value("diverged", false))  // the Trainer's record of a run that diverged earlier
          throw TrainingDiverged(j.value("error", std::string("diverged")), j.value("update", int64_t{0}));
        train.push_back(j.at("test").at("train_acc").get<double>());
        test.push_back(j.at("test").at("test_acc").get<double>());
        seconds += j.at("train_seconds").get<double>();
        epochs = j.at("epochs").get<double>();
      } catch (const TrainingDiverged& e) {  // recorded; the other norms still run
        diverged = "diverged at update " + std::to_string(e.update);
        j = {{"settings", s}, {"diverged", e.what()}};
      }
      j["norm"] = norm;
      runs.push_back(j);
      write_file_atomic(fs::path(a.out) / "results.json",
                        json{{"experiment", "ni2024-resnet"}, {"config", source}, {"runs", runs}}.dump(2) + "\n");
    }
    const double ptrain = paper_number("ni2024", "resnet-cifar-train", norm),
                 ptest = paper_number("ni2024", "resnet-cifar-test", norm);
    if (!diverged.empty()) {  // a mean over the other seeds would hide it
      rows.push_back({norm, diverged, diverged, format_fixed(ptrain), format_fixed(ptest), "—", "—"});
      continue;
    }
    train_mean[norm] = mean_of(train);
    test_mean[norm] = mean_of(test);
    rows.push_back({norm, format_mean_std(train), format_mean_std(test), format_fixed(ptrain), format_fixed(ptest), format_fixed(epochs),
                    format_fixed(seconds / 60.0 / a.seeds, 1)});
  }
  std::ostringstream md;
  md << "# Ni et al. 2024: CIFAR ResNet without ReLU\n\n"
     << "ResNet-" << base.at("depth") << " shape with every ReLU removed (task resnet-cifar), groups G = "
     << base.at("groups") << " for groupnorm and lng (LN-G-Position). Data: " << data << ". "
     << base.at("optimizer").get<std::string>() << " lr " << base.at("lr") << " (" << schedule_summary(base) << "), batch "
     << base.at("batch_size")
     << ", augment " << base.at("augment") << "; " << a.seeds << " seed(s). Train and test accuracy (%) of the "
     << "best-validation weights; train accuracy on the whole training subset in eval mode. Settings: "
     << (source.empty() ? "built-in defaults" : source) << " and flags. The slides give no epochs, depth or groups.\n\n"
     << markdown_table({"norm", "train acc %", "test acc %", "slides train %", "slides test %", "epochs run", "minutes / run"},
                       rows, {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right})
     << "\nThe slides' order LN-G > GN > LN > BN > IN: on train accuracy it " << order_check(train_mean)
     << "; on test accuracy it " << order_check(test_mean) << ".\n";
  write_file_atomic(fs::path(a.out) / "results.md", md.str());
  std::cout << "\n" << md.str() << "written: " << a.out << "/results.{json,md}\n";
}

void setup(CLI::App& app) {
  CLI::App* rep = app.get_subcommand("reproduce");
  auto* sub = rep->add_subcommand("ni2024-resnet",
                                  "Ni et al. 2024 ResNet without ReLU on CIFAR-10: IN, BN, LN, GN, LN-G next to the "
                                  "slides' table (task resnet-cifar)");
  sub->allow_extras(false);
  auto a = std::make_shared<ResNetArgs>();
  sub->add_option("--config", a->config, "resnet-cifar settings: a name in apps/configs/resnet-cifar/ or a .json path")
      ->capture_default_str();
  task_schema(*make_task("resnet-cifar")).add_flags(sub, a->flags, {"norm", "seed", "out"});
  sub->add_option("--norms", a->norms, "Norms to run")
      ->delimiter(',')
      ->check(CLI::IsMember(nl::image_norm_names()))
      ->capture_default_str();
  sub->add_option("--seeds", a->seeds, "Seeds 1..N per norm")->check(CLI::Range(1, 100))->capture_default_str();
  sub->add_option("--out", a->out, "Results folder")->capture_default_str();
  sub->callback([a] { run(*a); });
}

CommandRegistrar reg{{"reproduce-ni2024-resnet", 22, setup}};
}  // namespace
}  // namespace nlapp
