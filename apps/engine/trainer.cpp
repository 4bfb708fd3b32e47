#include "engine/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "autograd/anomaly.h"
#include "autograd/functions.h"
#include "backends/mixed_precision.h"
#include "backends/runtime.h"
#include "distributed/data_parallel.h"
#include "distributed/world.h"
#include "engine/active_clock.h"
#include "engine/eval_heartbeat.h"
#include "engine/run_device.h"
#include "engine/run_folder.h"
#include "engine/trainer_state.h"
#include "nn/init.h"
#include "nn/norm/stats_sync.h"
#include "optim/checkpoint.h"
#include "optim/clip.h"
#include "report/atomic_file.h"
#include "report/metrics_log.h"
#include "report/progress.h"
#include "report/run_environment.h"
#include "tensor/autocast.h"

namespace nlapp {
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {
constexpr const char* kFormat = "normlab-train-v2";

// "(0.9, 0.98)" or "0.9,0.98" → two numbers in [0, 1).
std::pair<double, double> parse_betas(const std::string& text) {
  std::string t;
  for (char c : text)
    if (c != '(' && c != ')' && c != ' ') t += c;
  auto comma = t.find(',');
  auto bad = std::invalid_argument("--adam-betas must be two numbers in [0, 1) such as '(0.9, 0.98)' (got '" + text + "')");
  if (comma == std::string::npos) throw bad;
  char* e1 = nullptr;
  char* e2 = nullptr;
  std::string a = t.substr(0, comma), b = t.substr(comma + 1);
  double b1 = std::strtod(a.c_str(), &e1), b2 = std::strtod(b.c_str(), &e2);
  if (a.empty() || b.empty() || *e1 || *e2 || !(b1 >= 0 && b1 < 1) || !(b2 >= 0 && b2 < 1)) throw bad;
  return {b1, b2};
}

int64_t geti(const json& s, const char* k) { return s.at(k).get<int64_t>(); }
double getd(const json& s, const char* k) { return s.at(k).get<double>(); }
bool getb(const json& s, const char* k) { return s.at(k).get<bool>(); }
std::string gets(const json& s, const char* k) { return s.at(k).get<std::string>(); }

nl::StateDict model_part(const nl::TensorMap& t) {
  nl::StateDict sd;
  for (auto& [k, v] : t)
    if (k.rfind("model.", 0) == 0) sd[k.substr(6)] = v;
  return sd;
}

// Builds the task's model once with its initialisers off (nl::init::SkipInitGuard) and drops it, restoring the
// generator's state. Its parameters' blocks are allocated but never written, so the CPU allocator's memory check
// (backends/cpu/cpu_memory.cpp) refuses a model too big for this machine before any weight is drawn (`train cls
// --d-model 65536` had drawn its 5 GiB embedding for two minutes before the refusal came). A model that fits
// costs its construction without the draws, and its blocks wait in the allocator's cache for the real build.
void size_model_before_drawing(Task& task, const json& s) {
  const auto [seed, offset] = nl::rng_state();
  {
    nl::init::SkipInitGuard skip;
    task.build_model(s);
  }
  nl::set_rng_state(seed, offset);
}

}  // namespace

OptionSchema task_schema(const Task& task) {
  OptionSchema s(trainer_settings());
  s.set_default("out", "runs/" + task.info().name);
  const json defaults = task.trainer_defaults();
  for (const auto& [k, v] : defaults.items()) s.set_default(k, v);
  s.add(task.settings());
  return s;
}

json RunResult::to_json() const {
  json t = json::object();
  for (const auto& [k, v] : test) t[k] = v;
  return {{"settings", settings},       {"updates", updates},         {"epochs", epochs},
          {"best_valid", best_valid},   {"best_epoch", best_epoch},   {"test", t},
          {"train_seconds", train_seconds}, {"items_per_s", items_per_s},
          {"train_loss", train_loss},   {"valid_curve", valid_curve}};
}


Trainer::Trainer(Task& task, json settings, TrainerHooks hooks)
    : task_(task), settings_(std::move(settings)), hooks_(std::move(hooks)) {
  const json& s = settings_;
  nl::set_num_threads((int)geti(s, "threads"));
  nl::manual_seed((uint64_t)geti(s, "seed"));
  device_ = settings_device(s);
  set_precision(s, device_);
  bf16_ = s.value("bf16", false);
  size_model_before_drawing(task_, s);
  model_ = task_.build_model(s);  // initialised on the host (same values on every device)
  model_->to(device_);            // before the optimizer, whose state is created on the parameters' device
  params_ = model_->parameters();
  const std::string o = gets(s, "optimizer");
  const double lr = getd(s, "lr"), wd = getd(s, "weight_decay");
  if (o == "sgd") {
    nl::SGDOptions so;
    so.lr = lr;
    so.momentum = getd(s, "momentum");
    so.weight_decay = wd;
    opt_ = std::make_unique<nl::SGD>(params_, so);
  } else {
    auto [b1, b2] = parse_betas(gets(s, "adam_betas"));
    nl::AdamOptions ao{lr, b1, b2, getd(s, "adam_eps"), wd};
    opt_ = o == "adamw" ? std::make_unique<nl::AdamW>(params_, ao) : std::make_unique<nl::Adam>(params_, ao);
  }
  const std::string sn = gets(s, "lr_scheduler");
  const int64_t warm = geti(s, "warmup_updates"), total = geti(s, "max_update");
  if (sn != "step" && geti(s, "lr_step_epochs") > 0)
    throw std::invalid_argument("--lr-step-epochs only applies to --lr-scheduler step (got --lr-scheduler " + sn +
                                "): add --lr-scheduler step or drop --lr-step-epochs");
  if (sn == "fixed") {
    if (warm > 0) throw std::invalid_argument("--warmup-updates needs a schedule: add --lr-scheduler inverse_sqrt, linear or cosine");
    sched_ = nl::make_schedule("constant", {{"lr", lr}});
  } else if (sn == "step") {
    const int64_t every = geti(s, "lr_step_epochs");
    if (every < 1) throw std::invalid_argument("--lr-scheduler step needs --lr-step-epochs of at least 1 (Ni et al.: 20)");
    if (warm > 0) throw std::invalid_argument("--lr-scheduler step has no warm-up: drop --warmup-updates");
    // Epochs to updates: the schedule counts updates (fairseq's num_updates); epoch 0's size is every
    // epoch's for the image tasks this schedule serves.
    const int64_t k = geti(s, "update_freq"), per_epoch = (task_.epoch_size(0) + k - 1) / k;
    sched_ = nl::make_schedule("step", {{"lr", lr}, {"step_size", every * std::max<int64_t>(per_epoch, 1)},
                                        {"gamma", getd(s, "lr_gamma")}});
  } else if (sn == "inverse_sqrt") {
    if (warm < 1) throw std::invalid_argument("--lr-scheduler inverse_sqrt needs --warmup-updates of at least 1 (fairseq uses 4000)");
    sched_ = nl::make_schedule("inverse_sqrt", {{"lr", lr}, {"warmup_updates", warm}, {"warmup_init_lr", getd(s, "warmup_init_lr")}});
  } else {
    if (total <= warm)
      throw std::invalid_argument("--lr-scheduler " + sn + " decays to --max-update: set --max-update greater than --warmup-updates (" +
                                  std::to_string(warm) + ")");
    json c = {{"lr", lr}, {"total_steps", total}, {"warmup_steps", warm}, {"warmup_init_lr", getd(s, "warmup_init_lr")}};
    if (sn == "cosine") c["min_lr"] = getd(s, "min_lr");
    sched_ = nl::make_schedule(sn, c);
  }
  const bool dist = s.value("distributed", false), sync = s.value("sync_batch_stats", false);
  if (sync && !dist)
    throw std::invalid_argument("--sync-batch-stats pools batch statistics over the ranks of a --distributed run: add "
                                "--distributed and launch with mpirun (docs/distributed.md), or drop --sync-batch-stats");
  if (dist && !device_.is_cpu())
    throw std::invalid_argument("--distributed trains on the cpu only (its all-reduce reads host memory): drop "
                                "`--device " + device_.str() + "` or --distributed");
  if (dist) {
    pg_ = &nl::dist::world(s.value("dist_timeout", 600.0));
    nl::dist::broadcast_module(*pg_, *model_);
    for (const auto& [name, b] : model_->named_buffers())
      if (b.dtype() != nl::DType::Int64) float_buffers_ = true;
    if (sync) {
      nl::dist::ProcessGroup* pg = pg_;
      nl::set_batch_stats_all_reduce([pg](double* d, int64_t n) { pg->all_reduce(std::span<double>(d, (size_t)n)); });
      sync_stats_ = true;
    }
  }
}

Trainer::~Trainer() {
  if (sync_stats_) nl::set_batch_stats_all_reduce({});
}

int Trainer::rank() const { return pg_ ? pg_->rank() : 0; }
int Trainer::world_size() const { return pg_ ? pg_->world_size() : 1; }

fs::path Trainer::out() const { return gets(settings_, "out"); }

nl::Tensor Trainer::update(const std::vector<const TaskBatch*>& micro, int64_t update_index) {
  if (pg_) return update_distributed(micro, update_index);
  opt_->zero_grad();
  const double k = (double)micro.size();
  nl::Tensor sum;  // Σ of the micro-batch losses in float64, where the model is: read by run() per log interval
  for (const TaskBatch* b : micro) {
    nl::Variable loss;
    {
      nl::AutocastGuard autocast(nl::DType::BFloat16, bf16_);  // --bf16: forward and loss; backward as recorded
      loss = task_.loss(*model_, *b);
    }
    const nl::Tensor lv = loss.data().to(nl::DType::Float64);
    sum = sum.defined() ? nl::add(sum, lv) : lv;
    if (micro.size() > 1) loss = loss * (1.0 / k);
    loss.backward();
  }
  if (!sum.defined()) return nl::Tensor::scalar(std::nan(""), nl::DType::Float64, device_);
  const nl::Tensor mean = micro.size() > 1 ? nl::div(sum, nl::Tensor::scalar(k, nl::DType::Float64, device_)) : sum;
  finish_update(mean, update_index);
  return mean;
}

void Trainer::finish_update(const nl::Tensor& mean_loss, int64_t update_index) {
  if (hooks_.after_backward) hooks_.after_backward(update_index + 1, mean_loss.item());
  const double clip = getd(settings_, "clip_norm");
  if (clip > 0) nl::clip_grad_norm_async_(params_, clip);
  opt_->set_lr(sched_->lr(update_index));
  opt_->step();
  // Running statistics follow rank 0 (DDP's broadcast_buffers); synced ones are equal already.
  if (pg_ && float_buffers_ && !sync_stats_) nl::dist::broadcast_module(*pg_, *model_, /*parameters=*/false);
  if (hooks_.after_step) hooks_.after_step(update_index + 1);
}

// This rank's micro-batches: the gradient of sum(loss x items) (every micro-batch's backward runs, also
// after a non-finite loss, so that --sync-batch-stats collectives stay in step), then one all-reduce of
// (loss x items, items, non-finite flag) and one of the gradients, scaled by 1 / total items: the mean
// over the update's items on all ranks, as one process with all the batches would compute it. The
// process group sums host numbers, so each loss is read here (data parallelism runs on the cpu).
nl::Tensor Trainer::update_distributed(const std::vector<const TaskBatch*>& micro, int64_t update_index) {
  opt_->zero_grad();
  double red[3] = {0, 0, 0};  // sum of loss x items, items, non-finite losses
  for (const TaskBatch* b : micro) {
    nl::Variable loss;
    {
      nl::AutocastGuard autocast(nl::DType::BFloat16, bf16_);
      loss = task_.loss(*model_, *b);
    }
    const double lv = loss.item();
    if (!std::isfinite(lv)) red[2] += 1;
    red[0] += lv * (double)b->items;
    red[1] += (double)b->items;
    (loss * (double)b->items).backward();
  }
  pg_->all_reduce(std::span<double>(red, 3));
  last_items_ = (int64_t)red[1];
  const double mean = red[2] > 0 ? std::nan("") : red[1] > 0 ? red[0] / red[1] : 0.0;
  const nl::Tensor out = nl::Tensor::scalar(mean, nl::DType::Float64, device_);
  if (!std::isfinite(mean)) return out;  // every rank sees it: the caller stops the run everywhere
  nl::dist::all_reduce_gradients(*pg_, params_, red[1] > 0 ? 1.0 / red[1] : 0.0);
  finish_update(out, update_index);
  return out;
}

Metrics Trainer::evaluate(const std::string& split) {
  nl::AutocastGuard autocast(nl::DType::BFloat16, bf16_);  // --bf16 evaluates in the precision it trains in
  if (!pg_) return task_.evaluate(*model_, split);
  double weight = 0;
  const Metrics m = task_.evaluate_shard(*model_, split, EvalShard{pg_->rank(), pg_->world_size()}, weight);
  // Every rank must report the same metrics: compare the count with rank 0's before summing.
  double keys = (double)m.size();
  pg_->broadcast(std::span<double>(&keys, 1), 0);
  double differ = keys == (double)m.size() ? 0 : 1;
  pg_->all_reduce(std::span<double>(&differ, 1));
  if (differ > 0)
    throw std::runtime_error("the ranks' evaluations of '" + split + "' report different metrics: " + task_.info().name +
                             "'s evaluate_shard must return the same keys on every rank");
  std::vector<double> sums{weight};
  for (const auto& [k, v] : m) sums.push_back(v * weight);
  pg_->all_reduce(std::span<double>(sums));
  Metrics out;
  size_t i = 1;
  for (const auto& [k, v] : m) out[k] = sums[0] > 0 ? sums[i++] / sums[0] : std::nan("");
  return out;
}

void Trainer::save_last(const State& st, bool interval_copy) {
  if (getb(settings_, "no_save") || !root()) return;
  nl::TensorMap t;
  for (auto& [k, v] : model_->state_dict()) t["model." + k] = v;
  json meta = {{"format", kFormat}, {"task", task_.info().name}, {"settings", settings_}, {"data", task_.data_summary()},
               {"state", st.to_json()}};
  meta["optimizer"] = opt_->save_state(t, "optimizer.");
  auto rng = nl::rng_state();
  meta["rng"] = {rng.first, rng.second};
  meta["metrics_lines"] = metrics_lines_;
  nl::save_checkpoint(out() / "checkpoint_last.safetensors", t, meta);
  if (!interval_copy) return;
  const std::string name = "checkpoint_" + std::to_string(st.epoch + 1) + "_" + std::to_string(st.updates) + ".safetensors";
  nl::save_checkpoint(out() / name, t, meta);
  prune_checkpoints(out(), geti(settings_, "keep_last"), /*epoch_files=*/false);
}

void Trainer::save_epoch(int64_t epoch, int64_t updates) {
  if (getb(settings_, "no_save") || !root()) return;
  nl::TensorMap t;
  for (auto& [k, v] : model_->state_dict()) t["model." + k] = v;
  nl::save_checkpoint(out() / ("checkpoint" + std::to_string(epoch) + ".safetensors"), t,
                      json{{"format", "normlab-model-v2"}, {"task", task_.info().name}, {"settings", settings_},
                           {"data", task_.data_summary()}, {"epoch", epoch}, {"update", updates}});
  prune_checkpoints(out(), geti(settings_, "keep_last_epochs"), /*epoch_files=*/true);
}

void Trainer::save_best(const State& st, double epoch_pos) {
  best_.clear();
  for (auto& [k, v] : model_->state_dict()) best_[k] = v.clone();
  if (getb(settings_, "no_save") || !root()) return;
  nl::TensorMap t;
  for (auto& [k, v] : best_) t["model." + k] = v;
  nl::save_checkpoint(out() / "checkpoint_best.safetensors", t,
                      json{{"format", "normlab-model-v2"}, {"task", task_.info().name}, {"settings", settings_},
                           {"data", task_.data_summary()}, {task_.info().metric, st.best}, {"epoch", epoch_pos},
                           {"update", st.updates}});
}

void Trainer::write_metrics(const json& record) {
  if (log_) log_->write(record);  // rank 0 only
  ++metrics_lines_;
}


void Trainer::validate(State& st, double epoch_pos) {
  if (st.last_valid_pos == epoch_pos) return;  // already validated at this point
  st.last_valid_pos = epoch_pos;
  Metrics m;
  {
    char what[64];
    std::snprintf(what, sizeof what, "validation at epoch %.2f", epoch_pos);
    EvalHeartbeat beat(what, [this](const std::string& t) { progress_->message(t); });
    m = evaluate("valid");
  }
  const auto& info = task_.info();
  const double v = m.at(info.metric);
  // A NaN the training loss did not show (a parameter that no batch reaches, or an activation hidden
  // by an arg-max) makes the run diverged here, not a run that trains on with broken weights.
  nl::TensorMap params;  // called at validation only
  for (const auto& [name, p] : model_->named_parameters()) params[name] = p.data();
  const std::string bad = first_non_finite_tensor(params);
  std::string bad_metric;
  for (const auto& [k, x] : m)
    if (!std::isfinite(x)) bad_metric = k;
  if (!bad.empty() || !bad_metric.empty())
    throw TrainingDiverged(
        (!bad.empty() ? "parameter '" + bad + "' holds a NaN or an infinity"
                      : "validation " + bad_metric + " is " + std::to_string(m.at(bad_metric))) +
            " at update " + std::to_string(st.updates) + " (epoch " + std::to_string(epoch_pos) +
            "): the run stopped. Lower --lr, set --clip-norm, or rerun with --detect-anomaly to name the first op that "
            "produced a non-finite value",
        st.updates);
  st.valid_curve.push_back({epoch_pos, v});
  json rec = {{"update", st.updates}, {"epoch", epoch_pos}};
  for (const auto& [k, x] : m) rec["valid_" + k] = x;
  write_metrics(rec);
  const bool better = std::isnan(st.best) || (info.higher_is_better ? v > st.best : v < st.best);
  if (better && std::isfinite(v)) {
    st.best = v;
    st.best_epoch = epoch_pos;
    st.best_update = st.updates;
    save_best(st, epoch_pos);
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "  epoch %.2f: %s %.4g (best %.4g at epoch %.2f)", epoch_pos,
                metric_label("valid", info.metric).c_str(), v,
                st.best, st.best_epoch);
  progress_->message(buf);
}

bool Trainer::try_resume(State& st) {
  const fs::path last = out() / "checkpoint_last.safetensors";
  if (!fs::exists(last)) return false;
  nl::Checkpoint ck = nl::load_checkpoint(last);
  const json& m = ck.meta;
  const std::string file = last.string();
  if (!m.is_object() || m.value("format", "") != kFormat)
    throw std::runtime_error("cannot resume from " + file + ": not a normlab training checkpoint of this version (format '" +
                             (m.is_object() ? m.value("format", "none") : "none") + "'); use another --out");
  if (m.value("task", "") != task_.info().name)
    throw std::runtime_error("cannot resume from " + file + ": it belongs to task '" + m.value("task", "") + "'");
  const json* old = m.contains("settings") ? &m["settings"] : nullptr;
  if (!old || !old->is_object()) throw std::runtime_error("cannot resume from " + file + ": key 'settings' is missing");
  if (const std::string why = resume_settings_mismatch(task_schema(task_), *old, settings_); !why.empty())
    throw std::runtime_error("cannot resume from " + file + " with different settings:" + why);
  for (const char* k : {"state", "optimizer", "rng", "metrics_lines"})
    if (!m.contains(k)) throw std::runtime_error("cannot resume from " + file + ": key '" + std::string(k) + "' is missing");
  try {
    model_->load_state_dict(model_part(ck.tensors));
    opt_->load_state(ck.tensors, m["optimizer"], "optimizer.");
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot resume from " + file + ": " + e.what());
  }
  // A training checkpoint never holds a NaN or an infinity (the loss is checked before every save): one
  // that does is damaged, and training on from it would only be reported as a divergence.
  if (const std::string bad = first_non_finite_tensor(ck.tensors); !bad.empty())
    throw std::runtime_error("cannot resume from " + file + ": tensor '" + bad + "' holds a NaN or an infinity, which "
                             "no checkpoint of a training run does, so the file is damaged; restore it, or start the "
                             "run again with --overwrite");
  st = State::from_json(m["state"], file);
  st.check_possible(task_.epoch_size((uint64_t)std::max<int64_t>(st.epoch, 0)), file);
  nl::set_rng_state(m["rng"][0].get<uint64_t>(), m["rng"][1].get<uint64_t>());
  metrics_lines_ = m["metrics_lines"].get<int64_t>();
  if (root()) {
    const TruncatedLog log = truncate_lines(out() / "metrics.jsonl", metrics_lines_);
    if (!log.damaged.empty()) {
      std::string at;
      for (int64_t n : log.damaged) at += (at.empty() ? "" : ", ") + std::to_string(n);
      progress_->message("warning: " + (out() / "metrics.jsonl").string() + " line(s) " + at +
                         " were not JSON (damaged) and are dropped; the log goes on from the checkpoint");
    }
    metrics_lines_ = log.kept;
  }
  // The best weights; an unreadable checkpoint_best does not block the resume: its record is dropped
  // and the next validation writes a new one.
  const fs::path bestp = out() / "checkpoint_best.safetensors";
  if (!std::isnan(st.best)) {
    try {
      best_ = model_part(nl::load_checkpoint(bestp).tensors);
      if (best_.empty()) throw std::runtime_error("it holds no model tensors");
    } catch (const std::exception& e) {
      progress_->message("warning: " + bestp.string() + " is unreadable (" + e.what() +
                         "); its record is dropped and the next validation chooses a new best");
      st.best = std::nan("");
      best_.clear();
    }
  }
  return true;
}


bool Trainer::keep_sound_results(RunResult& r) {
  bool sound = std::isfinite(r.best_valid) && !r.test.empty();
  for (const auto& [k, v] : r.test) sound = sound && std::isfinite(v);
  if (sound) return false;
  const fs::path file = out() / "results.json";
  const json old = sound_results(file);
  if (old.is_null()) return false;
  // This process has no sound results (e.g. a resume of a finished run whose checkpoint_best is unreadable):
  // report the ones on disk instead of replacing them with NaN or an empty test.
  r.best_valid = old["best_valid"].get<double>();
  r.best_epoch = old.value("best_epoch", 0.0);
  r.test.clear();
  for (const auto& [k, v] : old["test"].items()) r.test[k] = v.get<double>();
  progress_->message("warning: this run has no sound results to report (no readable best checkpoint, or non-finite "
                     "metrics); kept the earlier results in " + file.string() + " and report those");
  return true;
}

RunResult Trainer::run() {
  try {
    return run_loop();
  } catch (const TrainingDiverged& e) {
    // The run's record says so (train and reproduce alike); a distributed job stops on every rank,
    // since every rank saw the same all-reduced loss or parameters.
    if (root()) {
      // Sound results of this folder (a finished run whose limits were raised) are kept beside the record.
      const fs::path file = out() / "results.json", kept = out() / "results.before-divergence.json";
      if (!sound_results(file).is_null()) {
        fs::rename(file, kept);
        progress_->message("the earlier results of this folder were moved to " + kept.string());
      }
      json rec = {{"task", task_.info().name}, {"settings", settings_}, {"diverged", true}, {"error", e.what()},
                  {"update", e.update}, {"data", task_.data_summary()}};
      write_file_atomic(file, rec.dump(2) + "\n");
    }
    throw;
  } catch (const std::exception& e) {
    if (!pg_ || pg_->world_size() == 1) throw;  // the other ranks would wait for this one forever
    pg_->abort(std::string("error: ") + e.what() + "\n(aborting every rank of the job)");
    throw;  // not reached: abort ends the job (GCC does not carry [[noreturn]] through the virtual call)
  }
}

RunResult Trainer::run_loop() {
  const json& s = settings_;
  const auto& info = task_.info();
  const bool quiet = getb(s, "quiet");
  const int64_t max_epoch = geti(s, "max_epoch"), max_update = geti(s, "max_update"), k = geti(s, "update_freq");
  const int64_t log_every = geti(s, "log_interval"), val_ep = geti(s, "validate_interval"),
                val_up = geti(s, "validate_interval_updates"), save_up = geti(s, "save_interval_updates");
  // On for this run only, also when it ends with an exception.
  struct AnomalyScope {
    explicit AnomalyScope(bool on) { nl::set_anomaly_detection(on); }
    ~AnomalyScope() { nl::set_anomaly_detection(false); }
  } anomaly_scope(getb(s, "detect_anomaly"));

  const int64_t W = world_size(), R = rank();
  // The folder is this run's while it runs: a second normlab process is refused with our pid, and the
  // temporaries of a checkpoint write that a kill interrupted are nobody's now.
  std::unique_ptr<RunFolderLock> folder_lock;
  int stale_temps = 0;
  if (root()) {
    folder_lock = std::make_unique<RunFolderLock>(out());
    stale_temps = remove_stale_checkpoint_temps(out());
  }
  ProgressOptions po;
  int64_t per_epoch0 = task_.epoch_size(0);
  if (per_epoch0 <= 0)
    throw std::invalid_argument("the training set of " + task_.info().name + " gives no batch (" + task_.data_summary() +
                                "): every example was filtered out (e.g. by --max-source-positions / "
                                "--max-target-positions) or the set is empty; check --data and the length limits");
  int64_t updates_per_epoch = (per_epoch0 + k * W - 1) / (k * W);
  po.total_steps = max_update > 0 ? std::min(max_update, updates_per_epoch * max_epoch) : updates_per_epoch * max_epoch;
  po.total_epochs = (int)max_epoch;
  po.unit = info.unit;
  progress_ = std::make_unique<ProgressPrinter>(po, quiet || !root() ? &quiet_sink_ : nullptr);

  State st;
  const bool resumed = getb(s, "resume") && try_resume(st);
  // A new run never replaces another run's records unless asked (--resume without a checkpoint_last
  // keeps the old behaviour: the caller said the folder is this run's).
  if (root() && !getb(s, "resume")) claim_run_folder(out(), s.value("overwrite", false));
  if (pg_) {  // every rank reads OUT/checkpoint_last: all or none must find it
    double found = resumed ? 1 : 0;
    pg_->all_reduce(std::span<double>(&found, 1));
    if (found != 0 && found != (double)W)
      throw std::runtime_error("--resume: only " + std::to_string((int64_t)found) + " of " + std::to_string(W) +
                               " ranks found " + (out() / "checkpoint_last.safetensors").string() +
                               "; every rank must see --out (a shared folder, or a copy on every host)");
    nl::dist::broadcast_module(*pg_, *model_);
  }
  if (root()) {
    log_ = std::make_unique<MetricsLog>(out() / "metrics.jsonl", /*append=*/resumed);
    json cfg = {{"task", info.name}, {"settings", s}, {"data", task_.data_summary()}};
    write_file_atomic(out() / "config.json", cfg.dump(2) + "\n");
  }
  progress_->message(info.name + " (seed " + std::to_string(geti(s, "seed")) + "): " + task_.data_summary() + "; " +
                     std::to_string(updates_per_epoch) + " updates/epoch, " + std::to_string(max_epoch) + " epoch(s)" +
                     (max_update > 0 ? ", at most " + std::to_string(max_update) + " updates" : ", no update limit") +
                     "; writing to " + out().string() + (device_.is_cpu() ? "" : "; on " + device_.str()) +
                     (pg_ ? "; data parallel over " + std::to_string(W) + " rank(s) (" + pg_->backend() + ")" : ""));
  if (stale_temps > 0)
    progress_->message("removed " + std::to_string(stale_temps) + " temporary checkpoint file(s) .checkpoint*.tmp.* that an "
                       "interrupted run left in " + out().string());
  // A finished run whose limits were raised continues.
  const bool was_finished = st.finished;
  if (st.finished && st.epoch < max_epoch && (max_update == 0 || st.updates < max_update)) st.finished = false;
  if (resumed) {
    const std::string where = " (epoch " + std::to_string(st.epoch + 1) + ", batch " + std::to_string(st.next_batch) + ")";
    if (st.finished)
      progress_->message("this run already finished at update " + std::to_string(st.updates) +
                         ": nothing to train; testing its best checkpoint (raise --max-update or --max-epoch to train on)");
    else if (was_finished)
      progress_->message("this run had finished at update " + std::to_string(st.updates) +
                         "; the raised --max-update / --max-epoch let it train on from there" + where);
    else
      progress_->message("resuming from update " + std::to_string(st.updates) + where);
  }

  int64_t items = 0;
  const int64_t first_update = st.updates;
  // The training losses stay on the device: `losses` = st.loss_acc + the losses of the updates since the
  // last read (from update `first_unread` on), read once per log interval and before any validation or
  // checkpoint, where a non-finite sum stops the run (so no checkpoint holds a diverged model). On the
  // cpu a read costs nothing, so it happens after every update and names the exact update.
  const bool read_every_update = device_.is_cpu();
  nl::Tensor losses;
  int64_t first_unread = 0;
  auto read_losses = [&](int64_t batches) {
    if (!losses.defined()) return;
    st.loss_acc = losses.item();
    losses = nl::Tensor();
    if (std::isfinite(st.loss_acc)) return;
    std::ostringstream msg;
    msg << "training loss is " << st.loss_acc
        << (first_unread == st.updates ? " at update " : " in updates " + std::to_string(first_unread) + "-")
        << st.updates << " (epoch "
        << st.epoch + 1 << ", batch " << std::min(st.next_batch, batches) << "): the run stopped; " << out().string()
        << "/checkpoint_last.safetensors holds the last update saved before it. Lower --lr, set --clip-norm, lower "
        << "--log-interval to find the update, or rerun with --detect-anomaly to name the first op that produced a "
        << "non-finite value";
    throw TrainingDiverged(msg.str(), first_unread);
  };
  const ActiveClock clock;                   // wall time less the time the process was stopped (kill -STOP)
  const double seconds0 = st.train_seconds;  // what earlier processes trained
  auto train_clock = [&] { return seconds0 + clock.seconds(); };
  while (!st.finished) {
    if (st.epoch >= max_epoch || (max_update > 0 && st.updates >= max_update)) {
      st.finished = true;
      break;
    }
    const int64_t n = task_.epoch_size((uint64_t)st.epoch);
    if (sync_stats_ && n % W != 0)
      throw std::invalid_argument("--sync-batch-stats needs a batch on every rank at every step, but epoch " +
                                  std::to_string(st.epoch + 1) + " has " + std::to_string(n) + " batches for " +
                                  std::to_string(W) + " ranks: change --batch-size or the number of ranks so that it divides");
    // This update's batches: the next k·W of the epoch; rank R takes those at offsets R, R + W, ...
    const int64_t m = std::min(k * W, n - st.next_batch);
    std::vector<std::unique_ptr<TaskBatch>> own;
    std::vector<const TaskBatch*> micro;
    for (int64_t j = R; j < m; j += W) {
      own.push_back(task_.train_batch((uint64_t)st.epoch, st.next_batch + j));
      to_device(*own.back(), device_);
      micro.push_back(own.back().get());
      items += own.back()->items;
    }
    nl::Tensor lv;
    try {
      lv = update(micro, st.updates);
    } catch (const nl::AnomalyError& e) {
      throw TrainingDiverged(std::string(e.what()) + " (update " + std::to_string(st.updates + 1) + ")", st.updates + 1);
    }
    const double lr = opt_->lr();
    if (!losses.defined()) {
      losses = nl::Tensor::scalar(st.loss_acc, nl::DType::Float64, device_);
      first_unread = st.updates + 1;
    }
    losses = nl::add(losses, lv);  // the same double additions as a host sum, on the device
    ++st.updates;
    st.next_batch += m;
    ++st.loss_n;
    progress_->set_lr(lr);
    if (read_every_update) read_losses(n);
    progress_->update((int)st.epoch + 1, st.updates, read_every_update ? lv.item() : std::nan(""),
                      pg_ ? last_items_ : micro.empty() ? 0 : items);
    items = 0;
    if (st.updates % log_every == 0) {
      read_losses(n);
      const double mean = st.loss_acc / (double)st.loss_n;
      if (!read_every_update) progress_->observe_loss(mean);  // the interval's mean stands in for each loss
      st.train_loss.push_back({st.updates, mean});
      write_metrics({{"update", st.updates}, {"epoch", (double)st.epoch + (double)st.next_batch / (double)n},
                   {"train_loss", mean}, {"lr", lr}});
      st.loss_acc = 0;
      st.loss_n = 0;
    }
    const bool end_of_epoch = st.next_batch >= n;
    const double pos = end_of_epoch ? (double)(st.epoch + 1) : (double)st.epoch + (double)st.next_batch / (double)n;
    const bool hit_max = max_update > 0 && st.updates >= max_update;
    const bool due = (val_up > 0 && st.updates % val_up == 0) || (end_of_epoch && val_ep > 0 && (st.epoch + 1) % val_ep == 0);
    const bool last = hit_max || (end_of_epoch && st.epoch + 1 == max_epoch);  // the end always validates
    if (due || last) {
      read_losses(n);
      validate(st, pos);
    }
    const bool interval = save_up > 0 && st.updates % save_up == 0;
    if (end_of_epoch) {
      ++st.epoch;
      st.next_batch = 0;
    }
    if (st.epoch >= max_epoch || hit_max) st.finished = true;
    const int64_t save_ep = geti(s, "save_interval");
    const bool save_e = end_of_epoch && save_ep > 0 && st.epoch % save_ep == 0;
    if (save_e || interval || end_of_epoch || st.finished) read_losses(n);  // no checkpoint of a diverged run
    if (save_e) save_epoch(st.epoch, st.updates);
    if (interval || end_of_epoch || st.finished) {
      st.train_seconds = train_clock();
      save_last(st, interval);
    }
  }
  if (st.updates > first_update) progress_->finish();  // no "loss nan" line when this process trained nothing

  RunResult r;
  r.settings = s;
  r.updates = st.updates;
  r.epochs = st.valid_curve.empty() ? (double)st.epoch : st.valid_curve.back().first;
  r.best_valid = st.best;
  r.best_epoch = st.best_epoch;
  r.train_loss = st.train_loss;
  r.valid_curve = st.valid_curve;
  r.train_seconds = st.finished ? st.train_seconds : train_clock();
  r.items_per_s = progress_->items_per_second();
  if (!root()) return r;  // rank 0 tests and writes the results
  // The batch-statistics probes set no_test: their records are the product, a test pass would only cost time.
  const auto test0 = std::chrono::steady_clock::now();
  if (!best_.empty() && !s.value("no_test", false)) {
    EvalHeartbeat beat("test pass", [this](const std::string& t) { progress_->message(t); });
    nl::AutocastGuard autocast(nl::DType::BFloat16, bf16_);
    r.test = task_.final_test(*model_, best_, s);
  }
  // --no-test: the record has no test by request, which is no reason to keep an earlier one.
  if (!s.value("no_test", false) && keep_sound_results(r)) return r;
  for (const auto& [k, v] : r.test)  // a record's metrics are numbers: a NaN test is the run's divergence
    if (!std::isfinite(v))
      throw TrainingDiverged("test " + k + " of the best weights (epoch " + std::to_string(r.best_epoch) + ") is " +
                                 std::to_string(v) + ": the model gives non-finite outputs on the test set",
                             r.updates);
  json res = r.to_json();
  res["test_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - test0).count();
  res["precision"] = precision_name(s);
  if (pg_) res["world_size"] = pg_->world_size();  // --distributed: the global batch is the ranks' sum
  res["environment"] = run_environment((int)geti(s, "threads"), device_);
  res["task"] = info.name;
  res["data"] = task_.data_summary();
  res["metric"] = info.metric;
  double paper = task_.paper_reference(s);
  res["paper"] = std::isnan(paper) ? json() : json(paper);
  res["paper_source"] = info.paper;
  write_file_atomic(out() / "results.json", res.dump(2) + "\n");
  return r;
}

}  // namespace nlapp
