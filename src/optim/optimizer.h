#pragma once
// Optimizers over parameter groups with torch.optim semantics: Adam (Kingma & Ba 2015, Algorithm 1,
// L2 weight decay added to the gradient), AdamW (Loshchilov & Hutter 2019, decoupled weight decay) and
// SGD (momentum, dampening, Nesterov, L2 weight decay). Parameters are leaf Variables; updates are
// written into the parameter's storage (its version counter is bumped, so a graph that saved the old
// value refuses to backward), gradients are only read. State (moments, momentum buffers, per-parameter
// step counts, hyper-parameters) round-trips through a checkpoint so a resumed run is bit-identical.
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/variable.h"
#include "optim/checkpoint.h"

namespace nl {

/// A set of parameters sharing lr and weight decay. NaN means "use the optimizer's default" and is
/// replaced by the default when the optimizer is constructed.
struct ParamGroup {
  std::vector<Variable> params;
  double lr = std::numeric_limits<double>::quiet_NaN();
  double weight_decay = std::numeric_limits<double>::quiet_NaN();
};

/// Base class: parameter groups, per-parameter state, lr control and state (de)serialisation.
/// Every optimizer throws std::invalid_argument("optimizer got an empty parameter list ...") when
/// constructed without any parameter (as torch.optim).
class Optimizer {
 public:
  virtual ~Optimizer() = default;

  /// One update of every parameter that has a gradient (parameters whose grad is undefined are
  /// skipped and keep their state untouched). Runs under NoGradGuard. Throws std::invalid_argument
  /// if a gradient's dtype, device or shape differs from its parameter's.
  virtual void step() = 0;
  /// Drops every parameter's gradient (torch's zero_grad(set_to_none=True)).
  void zero_grad();

  /// Sets lr of every group (what a schedule calls before each step).
  void set_lr(double lr);
  /// lr of group `g` (default: the first group).
  double lr(size_t g = 0) const;
  /// The groups (lr and weight_decay may be edited between steps; do not add or remove parameters).
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  /// "adam", "adamw" or "sgd".
  virtual std::string type_name() const = 0;

  /// Writes this optimizer's state into a checkpoint: tensors named
  /// `<prefix>g<group>.p<index>.<buffer>` (e.g. "optimizer.g0.p3.exp_avg") go into `tensors`;
  /// returns JSON with the type, the hyper-parameters of every group and per-parameter step counts.
  /// Parameters are identified by their position in the groups, as in torch.
  nlohmann::json save_state(TensorMap& tensors, const std::string& prefix = "optimizer.") const;
  /// Restores what save_state wrote (into an optimizer built over the same parameters in the same
  /// order). Throws std::runtime_error naming the mismatch: another optimizer type, group or
  /// parameter count, a missing tensor, or a buffer whose shape/dtype differs from its parameter.
  void load_state(const TensorMap& tensors, const nlohmann::json& state, const std::string& prefix = "optimizer.");

 protected:
  /// Per-parameter state; which buffers are used depends on the optimizer.
  struct ParamState {
    int64_t step = 0;           ///< updates applied to this parameter (Adam's bias-correction t)
    std::map<std::string, Tensor> buffers;  ///< "exp_avg", "exp_avg_sq", "momentum_buffer"
  };
  Optimizer(std::vector<ParamGroup> groups, double default_lr, double default_wd);
  /// Hyper-parameters other than lr / weight_decay (beta1, momentum, ...), for save/load.
  virtual nlohmann::json hyper_json() const = 0;
  virtual void load_hyper_json(const nlohmann::json& j) = 0;
  /// Throws std::invalid_argument unless grad matches p in dtype, device and shape.
  static void check_grad(const Variable& p, const Tensor& grad, const char* who);

  std::vector<ParamGroup> groups_;
  std::vector<std::vector<ParamState>> state_;  ///< parallel to groups_[g].params
};

/// Options shared by Adam and AdamW (torch defaults; AdamW's weight_decay default is 0.01).
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

/// Adam (Kingma & Ba 2015, Algorithm 1) exactly as torch.optim.Adam (amsgrad=False):
///   g ← ∇ + wd·p;  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
///   p ← p − lr/(1−β1ᵗ) · m / (√v / √(1−β2ᵗ) + eps),
/// with t the parameter's own step count. Uses the backend's fused adam_step kernel.
class Adam : public Optimizer {
 public:
  /// One group holding `params`. Throws std::invalid_argument for an empty list, an undefined,
  /// non-leaf or int64 parameter, or betas outside [0, 1) / a negative eps.
  explicit Adam(std::vector<Variable> params, AdamOptions opts = {});
  /// Several groups; a group's NaN lr / weight_decay take opts.lr / opts.weight_decay.
  Adam(std::vector<ParamGroup> groups, AdamOptions opts = {});
  void step() override;
  std::string type_name() const override { return decoupled_ ? "adamw" : "adam"; }
  /// Constructor options (lr / weight_decay there are only the groups' defaults).
  const AdamOptions& options() const { return opts_; }

 protected:
  Adam(std::vector<ParamGroup> groups, AdamOptions opts, bool decoupled);
  nlohmann::json hyper_json() const override;
  void load_hyper_json(const nlohmann::json& j) override;
  AdamOptions opts_;
  bool decoupled_ = false;
};

/// AdamW (Loshchilov & Hutter 2019, Algorithm 2) exactly as torch.optim.AdamW: first
/// p ← p·(1 − lr·wd), then the Adam update above with the raw gradient (no L2 term).
/// AdamOptions::weight_decay is used as given (pass 0.01 for torch's AdamW default).
class AdamW : public Adam {
 public:
  /// As Adam's constructors.
  explicit AdamW(std::vector<Variable> params, AdamOptions opts = {});
  AdamW(std::vector<ParamGroup> groups, AdamOptions opts = {});
};

/// SGD options (torch defaults).
struct SGDOptions {
  double lr = 1e-2;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

/// SGD exactly as torch.optim.SGD:
///   d ← ∇ + wd·p;  if momentum: b ← d on the first step, else b ← μ·b + (1−dampening)·d;
///   d ← nesterov ? d + μ·b : b;  p ← p − lr·d.
/// Throws std::invalid_argument for nesterov without momentum or with nonzero dampening (as torch).
class SGD : public Optimizer {
 public:
  /// One group holding `params` (same parameter checks as Adam).
  explicit SGD(std::vector<Variable> params, SGDOptions opts = {});
  /// Several groups; a group's NaN lr / weight_decay take opts.lr / opts.weight_decay.
  SGD(std::vector<ParamGroup> groups, SGDOptions opts = {});
  void step() override;
  std::string type_name() const override { return "sgd"; }
  /// Constructor options (lr / weight_decay there are only the groups' defaults).
  const SGDOptions& options() const { return opts_; }

 protected:
  nlohmann::json hyper_json() const override;
  void load_hyper_json(const nlohmann::json& j) override;
  SGDOptions opts_;
};

}  // namespace nl
