// `normlab grad explain | stats | probe mnist`: how LayerNorm's gradient re-centres and re-scales
// (Xu et al. 2019, Theorem 1). The logic lives in apps/common/grad_*.cpp; this file only parses flags.
#include <iostream>

#include "common/cli_common.h"
#include "common/command_registry.h"
#include "common/grad_explain.h"
#include "common/grad_norms.h"
#include "common/grad_probe.h"
#include "common/grad_stats.h"
#include "common/mnist_experiment.h"

namespace nlapp {
namespace {

struct GradArgs {
  ExplainConfig explain;
  StatsConfig stats;
  ProbeConfig probe;
  std::string estimator = "paper", stats_estimator = "paper";
  std::string stats_norms = "all", probe_norms = "all";
  std::string data = kDefaultMnistData, out = "results/grad-probe";
  int threads = 1;
};

void setup_explain(CLI::App* grad, const std::shared_ptr<GradArgs>& a) {
  auto* e = grad->add_subcommand("explain", "One vector x through one norm: tape, Jacobian vs closed form, Theorem 1");
  e->add_option("--norm", a->explain.norm, "Norm variant")->required();
  e->add_option("--H", a->explain.H, "Size of x")->capture_default_str();
  e->add_option("--seed", a->explain.seed, "Seed for x and g")->capture_default_str();
  e->add_option("--estimator", a->estimator, "paper (biased sigma, eps 0) | code (unbiased std + 1e-5)")
      ->capture_default_str();
  e->add_option("--C", a->explain.C, "AdaNorm's C")->capture_default_str();
  e->add_option("--k", a->explain.k, "AdaNorm's k")->capture_default_str();
  e->callback([a]() {
    a->explain.est = parse_estimator(a->estimator);
    std::cout << format_explain(explain_gradients(a->explain));
  });
}

void setup_stats(CLI::App* grad, const std::shared_ptr<GradArgs>& a) {
  auto* s = grad->add_subcommand("stats", "Theorem 1 over many random (x, g): mean/variance of dL/dx vs theory");
  s->add_option("--norm", a->stats_norms, "'all' or a comma-separated list of variants")->capture_default_str();
  s->add_option("--H", a->stats.H, "Features per sample")->capture_default_str();
  s->add_option("--samples", a->stats.samples, "Random (x, g) pairs per input scale")->capture_default_str();
  s->add_option("--seed", a->stats.seed, "Seed")->capture_default_str();
  s->add_option("--estimator", a->stats_estimator, "paper | code")->capture_default_str();
  s->add_option("--C", a->stats.C, "AdaNorm's C")->capture_default_str();
  add_threads_option(s, &a->threads);
  s->callback([a]() {
    apply_threads(a->threads);
    a->stats.norms = parse_norm_list(a->stats_norms);
    a->stats.est = parse_estimator(a->stats_estimator);
    std::cout << format_stats(gradient_stats(a->stats), a->stats);
  });
}

void setup_probe(CLI::App* grad, const std::shared_ptr<GradArgs>& a) {
  auto* p = grad->add_subcommand("probe", "Record the gradient at the norm layer while a model trains");
  p->require_subcommand(1);
  auto* m = p->add_subcommand("mnist", "The MNIST CNN of Xu et al. 2019 (Adam 1e-3, batch 32)");
  m->add_option("--norm", a->probe_norms, "'all' or a comma-separated list of variants")->capture_default_str();
  m->add_option("--steps", a->probe.steps, "Training updates per variant")->capture_default_str();
  m->add_option("--seed", a->probe.seed, "Seed for init and batch order")->capture_default_str();
  m->add_option("--batch-size", a->probe.batch_size, "Images per update (paper: 32)")->capture_default_str();
  m->add_option("--lr", a->probe.lr, "Adam learning rate (paper: 1e-3)")->capture_default_str();
  m->add_option("--C", a->probe.C, "AdaNorm's C (paper's MNIST setting: 2)")->capture_default_str();
  m->add_option("--data", a->data, "MNIST-format folder (default: Fashion-MNIST)")->capture_default_str();
  m->add_option("--out", a->out, "Folder for <norm>.jsonl, <norm>.svg and mean-dx.svg")->capture_default_str();
  m->add_flag("--quiet", a->probe.quiet, "No progress lines");
  add_threads_option(m, &a->threads);
  m->callback([a]() {
    apply_threads(a->threads);
    a->probe.norms = parse_norm_list(a->probe_norms);
    a->probe.out = a->out;
    require_data_dir(a->data);
    auto runs = run_grad_probe(a->probe, load_mnist_data(a->data, nullptr));
    std::cout << "normlab grad probe mnist: " << a->probe.steps << " steps per variant, seed " << a->probe.seed
              << "; per-row statistics at the norm layer averaged over the batch and over the steps\n\n"
              << format_probe_summary(runs) << "\nJSON-lines and SVG plots in " << a->out << "\n";
  });
}

void setup(CLI::App& app) {
  auto* grad = app.add_subcommand("grad", "How normalization gradients work (Xu et al. 2019, Theorem 1)");
  grad->require_subcommand(1);
  auto a = std::make_shared<GradArgs>();
  setup_explain(grad, a);
  setup_stats(grad, a);
  setup_probe(grad, a);
}

CommandRegistrar reg{{"grad", 40, setup}};
}  // namespace
}  // namespace nlapp
