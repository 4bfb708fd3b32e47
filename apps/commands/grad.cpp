// `normlab grad explain | stats | probe <task> | batch-stats <task>`: how LayerNorm's gradient re-centres
// and re-scales (Xu et al. 2019, Theorem 1), and how batch statistics drift (Shen et al. 2020, Fig. 2). The logic lives in apps/common/grad_*.cpp and apps/probes/; this file
// only parses flags.
#include <iostream>

#include "common/cli_common.h"
#include "common/command_registry.h"
#include "common/grad_explain.h"
#include "common/grad_norms.h"
#include "common/grad_stats.h"
#include "engine/task_cli.h"
#include "probes/batch_stats_probe.h"
#include "probes/grad_probe.h"

namespace nlapp {
namespace {

struct GradArgs {
  ExplainConfig explain;
  StatsConfig stats;
  ProbeConfig probe;
  BatchStatsProbeConfig bstats;
  std::string bstats_norms = "all", bstats_out = "results/batch-stats";
  std::string estimator = "paper", stats_estimator = "paper";
  std::string stats_norms = "all", probe_norms = "all";
  std::string out = "results/grad-probe";
  int threads = 1;
};

void setup_explain(CLI::App* grad, const std::shared_ptr<GradArgs>& a) {
  auto* e = grad->add_subcommand("explain", "One vector x through one norm: tape, Jacobian vs closed form, Theorem 1");
  e->add_option("--norm", a->explain.norm, "Norm variant")->required();
  e->add_option("--H", a->explain.H, "Size of x [a whole number from 2 to 4096: explain prints H x H Jacobians]")
      ->capture_default_str()
      ->check(CLI::Range(2, 4096).description(""));
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
  auto* p = grad->add_subcommand("probe", "Record the gradient at a norm layer while a task's model trains");
  TaskVerb verb;
  verb.skip = {"norm", "out", "max_update", "no_save", "resume", "quiet"};
  verb.extra_flags = [a](CLI::App* m) {
    m->add_option("--norm", a->probe_norms, "'all' or a comma-separated list of variants")->capture_default_str();
    m->add_option("--steps", a->probe.steps, "Training updates per variant [a whole number from 1 to 100000000]")
        ->capture_default_str()
        ->check(CLI::Range((int64_t)1, (int64_t)100000000).description(""));
    m->add_option("--layer", a->probe.layer, "Dotted name of the watched module (default: the first *norm)");
    m->add_option("--out", a->out, "Folder for <norm>.jsonl, <norm>.svg and mean-dx.svg")
        ->capture_default_str()
        ->check(CLI::Validator([](std::string& s) { return s.empty() ? std::string("--out must be a folder path") : ""; }, ""));
    m->add_flag("--quiet", a->probe.quiet, "No progress lines");
  };
  verb.run = [a](TaskInvocation& inv) {
    a->probe.norms = parse_norm_list(a->probe_norms);
    a->probe.out = a->out;
    auto runs = run_grad_probe(*inv.task, inv.settings, a->probe);
    std::cout << "normlab grad probe " << inv.task->info().name << ": " << a->probe.steps << " steps per variant, seed "
              << inv.settings["seed"] << "; per-row statistics at the norm layer averaged over the batch and over the steps\n\n"
              << format_probe_summary(runs) << "\nJSON-lines and SVG plots in " << a->out << "\n";
  };
  add_task_subcommands(p, verb);
}

void setup_batch_stats(CLI::App* grad, const std::shared_ptr<GradArgs>& a) {
  auto* p = grad->add_subcommand(
      "batch-stats", "Record batch vs running statistics and their gradients at a batch-statistic norm while a task's "
                     "model trains (Shen et al. 2020, Figure 2)");
  TaskVerb verb;
  verb.skip = {"norm", "out", "max_update", "no_save", "resume", "quiet"};
  verb.extra_flags = [a](CLI::App* m) {
    m->add_option("--norm", a->bstats_norms,
                  "'all' (batchnorm, powernorm-v, powernorm) or a comma-separated list of batch-statistic norms")
        ->capture_default_str();
    m->add_option("--steps", a->bstats.steps, "Training updates per variant [a whole number from 1 to 100000000]")
        ->capture_default_str()
        ->check(CLI::Range((int64_t)1, (int64_t)100000000).description(""));
    m->add_option("--layer", a->bstats.layer,
                  "Dotted name of the watched norm (default: the first batch-statistic norm, e.g. "
                  "encoder.layers.0.self_attn_layer_norm)");
    m->add_option("--out", a->bstats_out, "Folder for <norm>.jsonl, <norm>.svg, var-dist.svg and grad-var.svg")
        ->capture_default_str()
        ->check(CLI::Validator([](std::string& s) { return s.empty() ? std::string("--out must be a folder path") : ""; }, ""));
    m->add_flag("--quiet", a->bstats.quiet, "No progress lines");
  };
  verb.run = [a](TaskInvocation& inv) {
    a->bstats.norms = parse_batch_stat_norms(a->bstats_norms);
    a->bstats.out = a->bstats_out;
    auto runs = run_batch_stats_probe(*inv.task, inv.settings, a->bstats);
    std::cout << "normlab grad batch-stats " << inv.task->info().name << ": " << a->bstats.steps
              << " updates per variant, seed " << inv.settings["seed"]
              << "; batch vs running statistics (before each update) and the gradients of the batch statistics, "
                 "averaged over the updates (– = not defined for that norm)\n\n"
              << format_batch_stats_summary(runs) << "\nJSON-lines and SVG plots in " << a->bstats_out << "\n";
  };
  add_task_subcommands(p, verb);
}

void setup(CLI::App& app) {
  auto* grad = app.add_subcommand("grad", "How normalization gradients work (Xu et al. 2019, Theorem 1) and batch statistics drift (Shen et al. 2020)");
  grad->require_subcommand(1);
  auto a = std::make_shared<GradArgs>();
  setup_explain(grad, a);
  setup_stats(grad, a);
  setup_probe(grad, a);
  setup_batch_stats(grad, a);
}

CommandRegistrar reg{{"grad", 40, setup}};
}  // namespace
}  // namespace nlapp
