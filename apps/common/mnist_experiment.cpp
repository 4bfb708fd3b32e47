#include "common/mnist_experiment.h"

#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "autograd/functions.h"
#include "common/atomic_file.h"
#include "common/metrics_log.h"
#include "common/progress.h"
#include "optim/checkpoint.h"
#include "optim/optimizer.h"

namespace nlapp {
using nl::Tensor;
using nl::Variable;
using json = nlohmann::json;

json MnistHistory::to_json() const { return {{"train_loss", train_loss}, {"valid_acc", valid_acc}}; }

MnistHistory MnistHistory::from_json(const json& j) {
  MnistHistory h;
  if (j.contains("train_loss")) h.train_loss = j["train_loss"].get<std::vector<std::pair<int64_t, double>>>();
  if (j.contains("valid_acc")) h.valid_acc = j["valid_acc"].get<std::vector<std::pair<double, double>>>();
  return h;
}

json MnistRunResult::to_json() const {
  return {{"norm", norm},          {"seed", seed},
          {"diverged", diverged},  {"diverged_at", diverged_at},
          {"best_valid_acc", best_valid_acc}, {"best_epoch", best_epoch},
          {"test_acc", test_acc},  {"test_loss", test_loss},
          {"updates", updates},    {"train_seconds", train_seconds},
          {"images_per_s", images_per_s}, {"history", history.to_json()}};
}

nl::MnistLikeSplits load_mnist_data(const std::filesystem::path& dir, std::string* name) {
  nl::MnistLikeSplits d = nl::load_mnist_like(dir);
  if (name) {
    std::string folder = std::filesystem::weakly_canonical(dir).filename().string();
    if (folder.empty()) folder = dir.string();
    *name = folder.find("fashion") != std::string::npos ? "fashion-mnist"
            : folder.find("mnist") != std::string::npos ? "mnist" : folder;
  }
  return d;
}

double paper_mnist_accuracy(const std::string& norm) {
  static const std::map<std::string, double> paper = {
      {"none", 99.14},        {"layernorm", 99.13},       {"layernorm-simple", 99.09}, {"detachnorm", 99.10},
      {"detach-mean", 99.25}, {"detach-variance", 99.10}, {"adanorm", 99.35}};
  auto it = paper.find(norm);
  return it == paper.end() ? std::nan("") : it->second;
}

std::pair<double, double> evaluate(nl::MnistCnn& model, const nl::ImageDataset& data) {
  nl::NoGradGuard ng;
  const bool was_training = model.is_training();
  model.eval();
  nl::Batcher b(data, 1000, 0, /*shuffle=*/false);
  int64_t correct = 0;
  double loss_sum = 0;
  for (int64_t i = 0; i < b.num_batches(); ++i) {
    nl::Batch batch = b.batch(i);
    Variable logits = model.forward(Variable(batch.images));
    const int64_t n = batch.labels.numel();
    loss_sum += nl::cross_entropy(logits, batch.labels).item() * (double)n;
    Tensor pred = nl::argmax(logits.data(), 1);
    correct += (int64_t)nl::sum(nl::eq(pred, batch.labels)).item();
  }
  model.train(was_training);
  const double n = (double)data.size();
  return {100.0 * (double)correct / n, loss_sum / n};
}

namespace {
// Everything a resumed run needs, besides the model and optimizer tensors.
struct RunState {
  int epoch = 0;
  int64_t next_batch = 0, updates = 0;
  double best_valid_acc = -1, best_epoch = 0;
  MnistHistory history;
};

json config_json(const MnistRunConfig& c) {
  return {{"task", "mnist"}, {"dataset", c.dataset_name}, {"norm", c.norm}, {"norm_opts", c.norm_opts},
          {"epochs", c.epochs}, {"batch_size", c.batch_size}, {"lr", c.lr}, {"seed", c.seed}};
}

void save_state(const std::filesystem::path& path, nl::MnistCnn& model, const nl::Optimizer& opt,
                const MnistRunConfig& cfg, const RunState& st) {
  nl::TensorMap t;
  for (auto& [k, v] : model.state_dict()) t["model." + k] = v;
  json meta = {{"format", "normlab-checkpoint-v1"},
               {"config", config_json(cfg)},
               {"epoch", st.epoch},
               {"next_batch", st.next_batch},
               {"updates", st.updates},
               {"best_valid_acc", st.best_valid_acc},
               {"best_epoch", st.best_epoch},
               {"history", st.history.to_json()}};
  meta["optimizer"] = opt.save_state(t, "optimizer.");
  nl::save_checkpoint(path, t, meta);
}

nl::StateDict model_part(const nl::TensorMap& t) {
  nl::StateDict sd;
  for (auto& [k, v] : t)
    if (k.rfind("model.", 0) == 0) sd[k.substr(6)] = v;
  return sd;
}
}  // namespace

MnistRunResult run_mnist(const MnistRunConfig& cfg, const nl::MnistLikeSplits& data) {
  if (cfg.epochs < 1) throw std::invalid_argument("--epochs must be at least 1");
  if (cfg.batch_size < 1) throw std::invalid_argument("--batch-size must be at least 1");
  if (!(cfg.lr > 0)) throw std::invalid_argument("--lr must be positive");
  nl::manual_seed(cfg.seed);
  nl::MnistCnnConfig mc;
  mc.norm = cfg.norm;
  mc.norm_opts = cfg.norm_opts;
  nl::MnistCnn model(mc);
  nl::Adam opt(model.parameters(), nl::AdamOptions{cfg.lr});
  nl::Batcher train(data.train, cfg.batch_size, cfg.seed);
  const int64_t per_epoch = train.num_batches();
  const int64_t eval_every = std::max<int64_t>(1, cfg.eval_every);

  RunState st;
  const bool write = !cfg.out.empty();
  const auto last_path = cfg.out / "last.safetensors", best_path = cfg.out / "best.safetensors";
  if (write) std::filesystem::create_directories(cfg.out);
  if (cfg.resume && write && std::filesystem::exists(last_path)) {
    nl::Checkpoint ck = nl::load_checkpoint(last_path);
    const json& m = ck.meta;
    if (!m.is_object() || m.value("format", "") != "normlab-checkpoint-v1")
      throw std::runtime_error("cannot resume from " + last_path.string() + ": not a normlab training checkpoint");
    if (m["config"]["norm"] != cfg.norm || m["config"]["seed"] != cfg.seed || m["config"]["batch_size"] != cfg.batch_size)
      throw std::runtime_error("cannot resume from " + last_path.string() + ": it was written by a run with " +
                               m["config"].dump() + "; use the same --norm/--seed/--batch-size or another --out");
    model.load_state_dict(model_part(ck.tensors));
    opt.load_state(ck.tensors, m["optimizer"], "optimizer.");
    st.epoch = m["epoch"];
    st.next_batch = m["next_batch"];
    st.updates = m["updates"];
    st.best_valid_acc = m["best_valid_acc"];
    st.best_epoch = m["best_epoch"];
    st.history = MnistHistory::from_json(m["history"]);
    if (!cfg.quiet)
      std::cout << "resuming " << cfg.norm << " from update " << st.updates << " (epoch " << st.epoch + 1
                << ", batch " << st.next_batch << ")\n";
  }
  std::unique_ptr<MetricsLog> log;
  if (write) {
    log = std::make_unique<MetricsLog>(cfg.out / "metrics.jsonl", /*append=*/cfg.resume);
    write_file_atomic(cfg.out / "config.json", config_json(cfg).dump(2) + "\n");
  }

  MnistRunResult res;
  res.norm = cfg.norm;
  res.seed = cfg.seed;
  const int64_t total = cfg.max_steps > 0 ? std::min<int64_t>(cfg.max_steps, per_epoch * cfg.epochs)
                                          : per_epoch * cfg.epochs;
  ProgressOptions po;
  po.total_steps = total;
  po.total_epochs = cfg.epochs;
  std::ostringstream sink;
  ProgressPrinter progress(po, cfg.quiet ? &sink : nullptr);
  if (!cfg.quiet) progress.message(cfg.norm + " (seed " + std::to_string(cfg.seed) + "): " + std::to_string(per_epoch) +
                                   " updates/epoch, " + std::to_string(data.train.size()) + " train / " +
                                   std::to_string(data.valid.size()) + " valid images");
  nl::StateDict best_state;
  if (write && std::filesystem::exists(best_path) && cfg.resume)
    best_state = model_part(nl::load_checkpoint(best_path).tensors);

  double loss_acc = 0;
  int64_t loss_n = 0, images = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto validate = [&](double epoch_pos) {
    auto [acc, vloss] = evaluate(model, data.valid);
    st.history.valid_acc.push_back({epoch_pos, acc});
    if (log) log->write({{"update", st.updates}, {"epoch", epoch_pos}, {"valid_acc", acc}, {"valid_loss", vloss}});
    if (acc > st.best_valid_acc) {
      st.best_valid_acc = acc;
      st.best_epoch = epoch_pos;
      best_state.clear();
      for (auto& [k, v] : model.state_dict()) best_state[k] = v.clone();
      if (write) {
        nl::TensorMap t;
        for (auto& [k, v] : best_state) t["model." + k] = v;
        nl::save_checkpoint(best_path, t, json{{"format", "normlab-model-v1"}, {"config", config_json(cfg)},
                                               {"valid_acc", acc}, {"epoch", epoch_pos}});
      }
    }
    if (!cfg.quiet) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "  epoch %.2f: valid acc %.2f%% (best %.2f%% at epoch %.2f)", epoch_pos, acc,
                    st.best_valid_acc, st.best_epoch);
      progress.message(buf);
    }
  };

  bool stop = false;
  for (; st.epoch < cfg.epochs && !stop; ++st.epoch, st.next_batch = 0) {
    train.set_epoch((uint64_t)st.epoch);
    for (int64_t i = st.next_batch; i < per_epoch; ++i) {
      nl::Batch b = train.batch(i);
      Variable loss = nl::cross_entropy(model.forward(Variable(b.images)), b.labels);
      const double lv = loss.item();
      if (!std::isfinite(lv)) {
        res.diverged = true;
        res.diverged_at = "update " + std::to_string(st.updates + 1) + " (loss " + std::to_string(lv) + ")";
        if (!cfg.quiet) progress.message("  diverged at " + res.diverged_at + "; stopping this run");
        stop = true;
        break;
      }
      opt.zero_grad();
      loss.backward();
      opt.step();
      ++st.updates;
      st.next_batch = i + 1;
      loss_acc += lv;
      ++loss_n;
      images += b.labels.numel();
      progress.update(st.epoch + 1, st.updates, lv, b.labels.numel());
      if (st.updates % 50 == 0) {
        st.history.train_loss.push_back({st.updates, loss_acc / (double)loss_n});
        if (log) log->write({{"update", st.updates}, {"train_loss", loss_acc / (double)loss_n}, {"lr", opt.lr()}});
        loss_acc = 0;
        loss_n = 0;
      }
      const bool end_of_epoch = i + 1 == per_epoch;
      // Default: at each quarter of the epoch (the last quarter ends with the epoch).
      const bool due = cfg.eval_every > 0 ? st.updates % eval_every == 0 : (i + 1) * 4 / per_epoch != i * 4 / per_epoch;
      if (due || end_of_epoch)
        validate((double)st.epoch + (double)(i + 1) / (double)per_epoch);
      if (write && (st.updates % cfg.save_every == 0 || end_of_epoch)) {
        RunState s2 = st;
        if (end_of_epoch) {
          s2.epoch += 1;
          s2.next_batch = 0;
        }
        save_state(last_path, model, opt, cfg, s2);
      }
      if (cfg.max_steps > 0 && st.updates >= cfg.max_steps) {
        stop = true;
        if (!end_of_epoch) {
          validate((double)st.epoch + (double)(i + 1) / (double)per_epoch);
          if (write) save_state(last_path, model, opt, cfg, st);
        }
        break;
      }
    }
    if (stop) break;
  }
  progress.finish();
  res.train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.images_per_s = res.train_seconds > 0 ? (double)images / res.train_seconds : 0;
  res.updates = st.updates;
  res.history = st.history;
  res.best_valid_acc = std::max(0.0, st.best_valid_acc);
  res.best_epoch = st.best_epoch;
  if (!best_state.empty()) {
    model.load_state_dict(best_state);
    std::tie(res.test_acc, res.test_loss) = evaluate(model, data.test);
  }
  if (write) write_file_atomic(cfg.out / "result.json", res.to_json().dump(2) + "\n");
  return res;
}

}  // namespace nlapp
