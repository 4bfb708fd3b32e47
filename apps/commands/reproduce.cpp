// `normlab reproduce mnist`: every LayerNorm variant of Xu et al. 2019 on the MNIST CNN, over seeds;
// writes results.json, results.md (the paper's MNIST column beside ours) and SVG plots into --out.
#include <cmath>
#include <iostream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/cli_common.h"
#include "common/command_registry.h"
#include "common/markdown_table.h"
#include "common/mnist_experiment.h"
#include "common/plot_svg.h"
#include "nn/norm/factory.h"

namespace nlapp {
namespace {
using json = nlohmann::json;

struct ReproduceArgs {
  int seeds = 3;
  int epochs = 20;
  int64_t max_steps = -1;
  std::string data = kDefaultMnistData;
  std::string out = "results/mnist";
  std::vector<std::string> variants = nl::norm_names();
  std::string impl = "fused";
  double C = 2.0;
  int threads = 1;
  bool resume = false;
};

std::string fmt(double v, int prec = 2) {
  if (std::isnan(v)) return "—";
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(prec);
  o << v;
  return o.str();
}

void run(const ReproduceArgs& a) {
  apply_threads(a.threads);
  require_data_dir(a.data);
  std::string dataset;
  auto data = load_mnist_data(a.data, &dataset);
  std::filesystem::create_directories(a.out);
  json all = json::array();
  std::map<std::string, std::vector<MnistRunResult>> by_variant;
  for (int s = 1; s <= a.seeds; ++s)
    for (const auto& v : a.variants) {
      MnistRunConfig c;
      c.norm = v;
      c.norm_opts = {{"impl", a.impl}};
      if (v == "adanorm") c.norm_opts["C"] = a.C;
      c.epochs = a.epochs;
      c.seed = (uint64_t)s;
      c.max_steps = a.max_steps;
      c.resume = a.resume;
      c.dataset_name = dataset;
      c.out = std::filesystem::path(a.out) / "runs" / (v + "-seed" + std::to_string(s));
      MnistRunResult r = run_mnist(c, data);
      all.push_back(r.to_json());
      by_variant[v].push_back(std::move(r));
      // Results so far are always on disk: a stopped reproduce loses at most the run in progress.
      write_file_atomic(std::filesystem::path(a.out) / "results.json",
                        json{{"dataset", dataset}, {"epochs", a.epochs}, {"seeds", a.seeds}, {"runs", all}}.dump(2));
    }

  std::vector<std::vector<std::string>> rows;
  for (const auto& v : a.variants) {
    const auto& rs = by_variant[v];
    std::vector<double> test, valid;
    int diverged = 0;
    double ips = 0;
    for (const auto& r : rs) {
      if (r.diverged) ++diverged;
      test.push_back(r.test_acc);
      valid.push_back(r.best_valid_acc);
      ips += r.images_per_s / (double)rs.size();
    }
    rows.push_back({v, format_mean_std(test), format_mean_std(valid), fmt(paper_mnist_accuracy(v)),
                    diverged ? std::to_string(diverged) + "/" + std::to_string(rs.size()) : "0", fmt(ips, 0)});
  }
  std::ostringstream md;
  md << "# MNIST CNN with each LayerNorm variant (Xu et al. 2019, appendix A.3)\n\n"
     << "Data: " << dataset << " (" << data.train.size() << " train / " << data.valid.size() << " valid / "
     << data.test.size() << " test). " << a.epochs << " epoch(s), " << a.seeds
     << " seed(s), Adam lr 1e-3, batch 32; test accuracy of the best-validation checkpoint, mean ± std over seeds.\n"
     << "The paper's column is MNIST after 20 epochs (Tables 1-4); it is comparable only when --data is MNIST "
        "and --epochs 20.\n\n";
  md << markdown_table({"variant", "test acc %", "best valid acc %", "paper (MNIST) %", "diverged", "images/s"}, rows,
                       {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right});
  write_file_atomic(std::filesystem::path(a.out) / "results.md", md.str());

  std::vector<Series> loss, acc;
  for (const auto& v : a.variants) {
    const auto& r = by_variant[v].front();  // curves of the first seed
    Series sl{v, {}, {}}, sa{v, {}, {}};
    for (auto& [step, l] : r.history.train_loss) {
      sl.x.push_back((double)step);
      sl.y.push_back(l);
    }
    for (auto& [ep, ac] : r.history.valid_acc) {
      sa.x.push_back(ep);
      sa.y.push_back(ac);
    }
    loss.push_back(sl);
    acc.push_back(sa);
  }
  write_line_chart(std::filesystem::path(a.out) / "train_loss.svg",
                   {"Training loss (" + dataset + ", seed 1)", "update", "cross-entropy (mean of 50 updates)", true}, loss);
  write_line_chart(std::filesystem::path(a.out) / "valid_acc.svg",
                   {"Validation accuracy (" + dataset + ", seed 1)", "epoch", "accuracy %"}, acc);
  std::cout << "\n" << md.str() << "\nwritten: " << a.out << "/results.{json,md}, train_loss.svg, valid_acc.svg\n";
}

void setup(CLI::App& app) {
  auto* rep = app.add_subcommand("reproduce", "Re-run a paper's experiment for every norm variant");
  rep->require_subcommand(1);
  auto a = std::make_shared<ReproduceArgs>();
  auto* m = rep->add_subcommand("mnist", "Xu et al. 2019 MNIST CNN, every LayerNorm variant");
  m->add_option("--seeds", a->seeds, "Seeds per variant (1..N)")->capture_default_str()->check(CLI::PositiveNumber);
  m->add_option("--epochs", a->epochs, "Epochs per run (paper: 20)")->capture_default_str()->check(CLI::PositiveNumber);
  m->add_option("--max-steps", a->max_steps, "Cap on updates per run (-1: none)")->capture_default_str();
  m->add_option("--data", a->data, "MNIST-format folder (default: Fashion-MNIST)")->capture_default_str();
  m->add_option("--out", a->out, "Results folder")->capture_default_str();
  m->add_option("--variants", a->variants, "Subset of variants")->check(CLI::IsMember(nl::norm_names()));
  m->add_option("--impl", a->impl, "LayerNorm implementation")->check(CLI::IsMember({"fused", "composite"}))->capture_default_str();
  m->add_option("--C", a->C, "AdaNorm's C (paper's MNIST setting: 2)")->capture_default_str();
  m->add_flag("--resume", a->resume, "Resume each run from its last checkpoint");
  add_threads_option(m, &a->threads);
  m->callback([a]() { run(*a); });
}

CommandRegistrar reg{{"reproduce", 20, setup}};
}  // namespace
}  // namespace nlapp
