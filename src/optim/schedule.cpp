#include "optim/schedule.h"

#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

namespace nl {

using nlohmann::json;

namespace {
[[noreturn]] void bad(const std::string& sched, const std::string& msg) {
  throw std::invalid_argument("schedule '" + sched + "': " + msg);
}
void check_step(const char* sched, int64_t step) {
  if (step < 0) bad(sched, "step must be >= 0, got " + std::to_string(step));
}
// Warmup/decay schedules need 0 <= warmup_steps < total_steps.
void check_warmup_total(const char* sched, int64_t warmup_steps, int64_t total_steps) {
  if (warmup_steps < 0) bad(sched, "warmup_steps must be >= 0, got " + std::to_string(warmup_steps));
  if (total_steps <= warmup_steps)
    bad(sched, "total_steps (" + std::to_string(total_steps) + ") must be greater than warmup_steps (" +
                   std::to_string(warmup_steps) + ")");
}
void check_lr(const char* sched, const char* what, double v) {
  if (!(v >= 0) || !std::isfinite(v)) bad(sched, std::string(what) + " must be a finite number >= 0, got " + std::to_string(v));
}
// warmup_init_lr and min_lr are bounds below the peak lr: above it, warm-up would lower the lr and cosine
// "decay" would raise it. The message names the trainer's flags too (--warmup-init-lr, --min-lr, --lr).
void check_not_above_lr(const char* sched, const char* what, const char* flag, double v, double lr, const char* why) {
  if (v <= lr) return;
  std::ostringstream o;
  o << what << " (" << flag << ") " << v << " is above lr (--lr) " << lr << ": " << why << "; set " << flag
    << " to at most --lr";
  bad(sched, o.str());
}
void check_warmup_init_lr(const char* sched, double warmup_init_lr, double lr) {
  check_lr(sched, "warmup_init_lr", warmup_init_lr);
  check_not_above_lr(sched, "warmup_init_lr", "--warmup-init-lr", warmup_init_lr, lr,
                     "warm-up would lower the lr instead of raising it");
}
double warmup_lr(double init, double lr, int64_t step, int64_t warmup) {
  return init + (double)step * ((lr - init) / (double)warmup);
}
}  // namespace

ConstantSchedule::ConstantSchedule(double lr) : lr_(lr) { check_lr("constant", "lr", lr); }
double ConstantSchedule::lr(int64_t step) const {
  check_step("constant", step);
  return lr_;
}
json ConstantSchedule::to_json() const { return {{"name", name()}, {"lr", lr_}}; }

InverseSqrtSchedule::InverseSqrtSchedule(double lr, int64_t warmup_updates, double warmup_init_lr)
    : lr_(lr), warmup_init_lr_(warmup_init_lr), warmup_(warmup_updates) {
  check_lr("inverse_sqrt", "lr", lr);
  check_warmup_init_lr("inverse_sqrt", warmup_init_lr, lr);
  if (warmup_updates < 1)
    bad("inverse_sqrt", "warmup_updates must be >= 1 (lr/sqrt(step) is undefined at step 0), got " +
                            std::to_string(warmup_updates));
}
double InverseSqrtSchedule::lr(int64_t step) const {
  check_step("inverse_sqrt", step);
  if (step < warmup_) return warmup_lr(warmup_init_lr_, lr_, step, warmup_);
  const double decay_factor = lr_ * std::sqrt((double)warmup_);
  return decay_factor / std::sqrt((double)step);
}
json InverseSqrtSchedule::to_json() const {
  return {{"name", name()}, {"lr", lr_}, {"warmup_updates", warmup_}, {"warmup_init_lr", warmup_init_lr_}};
}

LinearSchedule::LinearSchedule(double lr, int64_t warmup_steps, int64_t total_steps, double warmup_init_lr)
    : lr_(lr), warmup_init_lr_(warmup_init_lr), warmup_(warmup_steps), total_(total_steps) {
  check_lr("linear", "lr", lr);
  check_warmup_init_lr("linear", warmup_init_lr, lr);
  check_warmup_total("linear", warmup_steps, total_steps);
}
double LinearSchedule::lr(int64_t step) const {
  check_step("linear", step);
  if (step < warmup_) return warmup_lr(warmup_init_lr_, lr_, step, warmup_);
  return lr_ * std::max(0.0, (double)(total_ - step) / (double)(total_ - warmup_));
}
json LinearSchedule::to_json() const {
  return {{"name", name()}, {"lr", lr_}, {"warmup_steps", warmup_}, {"total_steps", total_},
          {"warmup_init_lr", warmup_init_lr_}};
}

CosineSchedule::CosineSchedule(double lr, int64_t warmup_steps, int64_t total_steps, double min_lr,
                               double warmup_init_lr)
    : lr_(lr), min_lr_(min_lr), warmup_init_lr_(warmup_init_lr), warmup_(warmup_steps), total_(total_steps) {
  check_lr("cosine", "lr", lr);
  check_lr("cosine", "min_lr", min_lr);
  check_not_above_lr("cosine", "min_lr", "--min-lr", min_lr, lr, "the cosine decay would raise the lr to it");
  check_warmup_init_lr("cosine", warmup_init_lr, lr);
  check_warmup_total("cosine", warmup_steps, total_steps);
}
double CosineSchedule::lr(int64_t step) const {
  check_step("cosine", step);
  if (step < warmup_) return warmup_lr(warmup_init_lr_, lr_, step, warmup_);
  const double p = std::min(1.0, (double)(step - warmup_) / (double)(total_ - warmup_));
  return min_lr_ + (lr_ - min_lr_) * 0.5 * (1.0 + std::cos(M_PI * p));
}
json CosineSchedule::to_json() const {
  return {{"name", name()}, {"lr", lr_}, {"warmup_steps", warmup_}, {"total_steps", total_},
          {"min_lr", min_lr_}, {"warmup_init_lr", warmup_init_lr_}};
}

StepSchedule::StepSchedule(double lr, int64_t step_size, double gamma) : lr_(lr), gamma_(gamma), step_size_(step_size) {
  check_lr("step", "lr", lr);
  if (step_size < 1) bad("step", "step_size must be >= 1 update, got " + std::to_string(step_size));
  if (!(gamma > 0) || !std::isfinite(gamma))
    bad("step", "gamma must be a finite number > 0 (0.5 halves the lr every step_size updates), got " +
                    std::to_string(gamma));
}
double StepSchedule::lr(int64_t step) const {
  check_step("step", step);
  return lr_ * std::pow(gamma_, (double)(step / step_size_));
}
json StepSchedule::to_json() const { return {{"name", name()}, {"lr", lr_}, {"step_size", step_size_}, {"gamma", gamma_}}; }

std::vector<std::string> schedule_names() { return {"constant", "inverse_sqrt", "linear", "cosine", "step"}; }

namespace {
// Reads typed keys from a config object with clear errors; rejects keys it was not asked about.
struct ConfigReader {
  const std::string& sched;
  const json& j;
  std::set<std::string> known{"name"};

  template <typename T> T get(const std::string& k, const T* fallback) {
    known.insert(k);
    if (!j.contains(k)) {
      if (!fallback) bad(sched, "missing required key '" + k + "'");
      return *fallback;
    }
    const json& v = j.at(k);
    if constexpr (std::is_same_v<T, int64_t>) {
      if (v.is_number_integer()) return v.get<int64_t>();
      if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()) return (int64_t)v.get<double>();
      bad(sched, "key '" + k + "' must be an integer, got " + v.dump());
    } else {
      if (!v.is_number()) bad(sched, "key '" + k + "' must be a number, got " + v.dump());
      return v.get<double>();
    }
  }
  double num(const std::string& k) { return get<double>(k, nullptr); }
  double num(const std::string& k, double d) { return get<double>(k, &d); }
  int64_t integer(const std::string& k) { return get<int64_t>(k, nullptr); }
  int64_t integer(const std::string& k, int64_t d) { return get<int64_t>(k, &d); }
  void finish() {
    for (const auto& item : j.items())
      if (const std::string k = item.key(); !known.count(k)) {
        std::string list;
        for (const auto& s : known) list += (list.empty() ? "" : ", ") + s;
        bad(sched, "unknown key '" + k + "' (accepted: " + list + ")");
      }
  }
};
}  // namespace

std::unique_ptr<Schedule> make_schedule(const std::string& name, const json& config) {
  const json empty = json::object();
  const json& j = config.is_null() ? empty : config;
  if (!j.is_object()) bad(name, "config must be a JSON object, got " + j.dump());
  if (j.contains("name") && !(j["name"].is_string() && j["name"].get<std::string>() == name))
    bad(name, "config names another schedule: " + j["name"].dump());
  ConfigReader r{name, j};
  std::unique_ptr<Schedule> s;
  if (name == "constant") {
    double lr = r.num("lr");
    r.finish();
    s = std::make_unique<ConstantSchedule>(lr);
  } else if (name == "inverse_sqrt") {
    double lr = r.num("lr");
    int64_t w = r.integer("warmup_updates", 4000);
    double init = r.num("warmup_init_lr", 0.0);
    r.finish();
    s = std::make_unique<InverseSqrtSchedule>(lr, w, init);
  } else if (name == "linear") {
    double lr = r.num("lr");
    int64_t total = r.integer("total_steps");
    int64_t w = r.integer("warmup_steps", 0);
    double init = r.num("warmup_init_lr", 0.0);
    r.finish();
    s = std::make_unique<LinearSchedule>(lr, w, total, init);
  } else if (name == "cosine") {
    double lr = r.num("lr");
    int64_t total = r.integer("total_steps");
    int64_t w = r.integer("warmup_steps", 0);
    double min_lr = r.num("min_lr", 0.0);
    double init = r.num("warmup_init_lr", 0.0);
    r.finish();
    s = std::make_unique<CosineSchedule>(lr, w, total, min_lr, init);
  } else if (name == "step") {
    double lr = r.num("lr");
    int64_t size = r.integer("step_size");
    double gamma = r.num("gamma", 0.1);
    r.finish();
    s = std::make_unique<StepSchedule>(lr, size, gamma);
  } else {
    std::string list;
    for (const auto& n : schedule_names()) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown schedule '" + name + "' (known: " + list + ")");
  }
  return s;
}

std::unique_ptr<Schedule> schedule_from_json(const json& config) {
  if (!config.is_object() || !config.contains("name") || !config["name"].is_string())
    throw std::invalid_argument("schedule config needs a string \"name\" key, got " + config.dump());
  return make_schedule(config["name"].get<std::string>(), config);
}

}  // namespace nl
