// `normlab train mnist`: trains the CNN of Xu et al. 2019 (appendix A.3) with one norm variant.
#include <iostream>

#include "common/cli_common.h"
#include "common/command_registry.h"
#include "common/mnist_experiment.h"
#include "nn/norm/factory.h"

namespace nlapp {
namespace {

struct TrainMnistArgs {
  MnistRunConfig cfg;
  std::string data = kDefaultMnistData;
  std::string impl = "fused";
  double C = 2.0;
  int threads = 1;
  std::string out = "runs/mnist";
};

void setup(CLI::App& app) {
  auto* train = app.add_subcommand("train", "Train a model of the papers with a chosen norm");
  train->require_subcommand(1);
  auto a = std::make_shared<TrainMnistArgs>();
  auto* m = train->add_subcommand("mnist", "The MNIST CNN of Xu et al. 2019 (conv-pool-conv-pool-linear-norm-ReLU-linear)");
  m->add_option("--norm", a->cfg.norm, "Norm variant")
      ->check(CLI::IsMember(nl::norm_names()))
      ->capture_default_str();
  m->add_option("--data", a->data, "MNIST-format folder (default: Fashion-MNIST from dataset-fashion-mnist)")
      ->capture_default_str();
  m->add_option("--epochs", a->cfg.epochs, "Epochs (paper: 20)")->capture_default_str()->check(CLI::PositiveNumber);
  m->add_option("--batch-size", a->cfg.batch_size, "Images per update (paper: 32)")->capture_default_str()->check(CLI::PositiveNumber);
  m->add_option("--lr", a->cfg.lr, "Adam learning rate (paper: 1e-3)")->capture_default_str();
  m->add_option("--seed", a->cfg.seed, "Seed for init and batch order")->capture_default_str();
  m->add_option("--max-steps", a->cfg.max_steps, "Stop after this many updates (-1: no limit)")->capture_default_str();
  m->add_option("--eval-every", a->cfg.eval_every, "Validate every N updates (0: 4 times per epoch)")->capture_default_str();
  m->add_option("--impl", a->impl, "LayerNorm implementation")->check(CLI::IsMember({"fused", "composite"}))->capture_default_str();
  m->add_option("--C", a->C, "AdaNorm's scale C (paper's MNIST setting: 2)")->capture_default_str();
  m->add_option("--out", a->out, "Run folder: metrics.jsonl, last/best checkpoints, result.json")->capture_default_str();
  m->add_flag("--resume", a->cfg.resume, "Continue from OUT/last.safetensors if present");
  m->add_flag("--quiet", a->cfg.quiet, "No progress line");
  add_threads_option(m, &a->threads);
  m->callback([a]() {
    apply_threads(a->threads);
    require_data_dir(a->data);
    a->cfg.out = a->out;
    a->cfg.norm_opts = {{"impl", a->impl}};
    if (a->cfg.norm == "adanorm") a->cfg.norm_opts["C"] = a->C;
    auto data = load_mnist_data(a->data, &a->cfg.dataset_name);
    MnistRunResult r = run_mnist(a->cfg, data);
    if (r.diverged) std::cout << "training diverged at " << r.diverged_at << "\n";
    std::printf("%s on %s: best valid acc %.2f%% (epoch %.2f), test acc %.2f%%, %.0f images/s; results in %s\n",
                r.norm.c_str(), a->cfg.dataset_name.c_str(), r.best_valid_acc, r.best_epoch, r.test_acc,
                r.images_per_s, a->cfg.out.string().c_str());
  });
}

CommandRegistrar reg{{"train", 10, setup}};
}  // namespace
}  // namespace nlapp
