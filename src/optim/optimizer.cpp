#include "optim/optimizer.h"

#include <stdexcept>

#include "autograd/tape.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"

namespace nl {

using nlohmann::json;

// ---------------------------------------------------------------- base

Optimizer::Optimizer(std::vector<ParamGroup> groups, double default_lr, double default_wd)
    : groups_(std::move(groups)) {
  // As PyTorch: an optimizer over nothing is almost always a bug (parameters taken before the layers
  // registered them, or an empty filter), so it is refused instead of silently never updating.
  size_t total = 0;
  for (const auto& grp : groups_) total += grp.params.size();
  if (total == 0)
    throw std::invalid_argument("optimizer got an empty parameter list; pass the model's parameters() "
                                "after its layers are registered");
  for (size_t g = 0; g < groups_.size(); ++g) {
    auto& grp = groups_[g];
    if (std::isnan(grp.lr)) grp.lr = default_lr;
    if (std::isnan(grp.weight_decay)) grp.weight_decay = default_wd;
    if (!(grp.lr >= 0)) throw std::invalid_argument("optimizer: invalid lr " + std::to_string(grp.lr) +
                                                    " in group " + std::to_string(g));
    if (!(grp.weight_decay >= 0))
      throw std::invalid_argument("optimizer: invalid weight_decay " + std::to_string(grp.weight_decay) +
                                  " in group " + std::to_string(g));
    for (size_t i = 0; i < grp.params.size(); ++i) {
      const Variable& p = grp.params[i];
      if (!p.defined()) throw std::invalid_argument("optimizer: parameter " + std::to_string(i) + " of group " +
                                                    std::to_string(g) + " is undefined");
      if (!p.is_leaf())
        throw std::invalid_argument("optimizer: parameter '" + p.name() + "' (" + std::to_string(i) + " of group " +
                                    std::to_string(g) + ") is not a leaf variable");
      if (p.dtype() != DType::Float32 && p.dtype() != DType::Float64)
        throw std::invalid_argument("optimizer: parameter '" + p.name() + "' is " + dtype_name(p.dtype()) +
                                    "; only float32/float64 parameters can be optimized (mixed precision keeps "
                                    "float32 master weights)");
    }
  }
  state_.resize(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) state_[g].resize(groups_[g].params.size());
}

void Optimizer::zero_grad() {
  for (auto& grp : groups_)
    for (auto& p : grp.params) p.zero_grad();
}

void Optimizer::set_lr(double lr) {
  for (auto& grp : groups_) grp.lr = lr;
}

double Optimizer::lr(size_t g) const {
  if (g >= groups_.size())
    throw std::out_of_range("optimizer: group " + std::to_string(g) + " of " + std::to_string(groups_.size()));
  return groups_[g].lr;
}

void Optimizer::check_grad(const Variable& p, const Tensor& grad, const char* who) {
  auto where = [&] { return std::string(who) + ": gradient of parameter '" + p.name() + "'"; };
  if (grad.dtype() != p.dtype())
    throw std::invalid_argument(where() + " is " + dtype_name(grad.dtype()) + ", parameter is " + dtype_name(p.dtype()));
  if (grad.device() != p.device())
    throw std::invalid_argument(where() + " is on " + grad.device().str() + ", parameter on " + p.device().str());
  if (grad.shape() != p.shape())
    throw std::invalid_argument(where() + " has shape " + shape_str(grad.shape()) + ", parameter " +
                                shape_str(p.shape()));
}

static std::string key(const std::string& prefix, size_t g, size_t i, const std::string& buf) {
  return prefix + "g" + std::to_string(g) + ".p" + std::to_string(i) + "." + buf;
}

json Optimizer::save_state(TensorMap& tensors, const std::string& prefix) const {
  json j;
  j["type"] = type_name();
  j["hyper"] = hyper_json();
  j["groups"] = json::array();
  for (size_t g = 0; g < groups_.size(); ++g) {
    json grp = {{"lr", groups_[g].lr}, {"weight_decay", groups_[g].weight_decay},
                {"num_params", groups_[g].params.size()}, {"state", json::array()}};
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const ParamState& st = state_[g][i];
      json s = {{"step", st.step}, {"buffers", json::array()}};
      for (const auto& [name, t] : st.buffers) {
        if (!t.defined()) continue;
        s["buffers"].push_back(name);
        tensors[key(prefix, g, i, name)] = t.clone();  // our buffers are updated in place later
      }
      grp["state"].push_back(s);
    }
    j["groups"].push_back(grp);
  }
  return j;
}

void Optimizer::load_state(const TensorMap& tensors, const json& state, const std::string& prefix) {
  auto fail = [](const std::string& m) { throw std::runtime_error("optimizer state: " + m); };
  try {
    if (state.value("type", std::string()) != type_name())
      fail("saved by optimizer '" + state.value("type", std::string("?")) + "', loading into '" + type_name() + "'");
    const json& groups = state.at("groups");
    if (groups.size() != groups_.size())
      fail(std::to_string(groups.size()) + " parameter groups saved, optimizer has " + std::to_string(groups_.size()));
    // Validate everything before changing anything.
    std::vector<std::vector<ParamState>> next(groups_.size());
    for (size_t g = 0; g < groups_.size(); ++g) {
      const json& grp = groups[g];
      const json& sts = grp.at("state");
      if (sts.size() != groups_[g].params.size())
        fail("group " + std::to_string(g) + " has " + std::to_string(sts.size()) + " saved parameters, optimizer has " +
             std::to_string(groups_[g].params.size()));
      next[g].resize(sts.size());
      for (size_t i = 0; i < sts.size(); ++i) {
        const Variable& p = groups_[g].params[i];
        ParamState& ps = next[g][i];
        ps.step = sts[i].at("step").get<int64_t>();
        for (const auto& b : sts[i].at("buffers")) {
          const std::string name = b.get<std::string>(), k = key(prefix, g, i, name);
          auto it = tensors.find(k);
          if (it == tensors.end()) fail("tensor '" + k + "' is missing from the checkpoint");
          const Tensor& t = it->second;
          if (t.shape() != p.shape() || t.dtype() != p.dtype())
            fail("tensor '" + k + "' is " + dtype_name(t.dtype()) + " " + shape_str(t.shape()) + " but parameter '" +
                 p.name() + "' is " + dtype_name(p.dtype()) + " " + shape_str(p.shape()));
          ps.buffers[name] = t.to(p.device()).clone();  // own storage: updated in place
        }
      }
    }
    load_hyper_json(state.at("hyper"));
    for (size_t g = 0; g < groups_.size(); ++g) {
      groups_[g].lr = groups[g].at("lr").get<double>();
      groups_[g].weight_decay = groups[g].at("weight_decay").get<double>();
    }
    state_ = std::move(next);
  } catch (const json::exception& e) {
    fail(std::string("malformed JSON: ") + e.what());
  }
}

// ---------------------------------------------------------------- Adam / AdamW

static std::vector<ParamGroup> one_group(std::vector<Variable> params) {
  ParamGroup g;
  g.params = std::move(params);
  return {std::move(g)};
}

static void check_adam(const AdamOptions& o) {
  if (!(o.eps >= 0)) throw std::invalid_argument("Adam: invalid eps " + std::to_string(o.eps));
  if (!(o.beta1 >= 0 && o.beta1 < 1)) throw std::invalid_argument("Adam: invalid beta1 " + std::to_string(o.beta1));
  if (!(o.beta2 >= 0 && o.beta2 < 1)) throw std::invalid_argument("Adam: invalid beta2 " + std::to_string(o.beta2));
}

Adam::Adam(std::vector<Variable> params, AdamOptions opts) : Adam(one_group(std::move(params)), opts, false) {}
Adam::Adam(std::vector<ParamGroup> groups, AdamOptions opts) : Adam(std::move(groups), opts, false) {}
Adam::Adam(std::vector<ParamGroup> groups, AdamOptions opts, bool decoupled)
    : Optimizer(std::move(groups), opts.lr, opts.weight_decay), opts_(opts), decoupled_(decoupled) {
  check_adam(opts_);
}

AdamW::AdamW(std::vector<Variable> params, AdamOptions opts) : Adam(one_group(std::move(params)), opts, true) {}
AdamW::AdamW(std::vector<ParamGroup> groups, AdamOptions opts) : Adam(std::move(groups), opts, true) {}

void Adam::step() {
  NoGradGuard no_grad;
  const char* who = decoupled_ ? "AdamW" : "Adam";
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& grp = groups_[g];
    for (size_t i = 0; i < grp.params.size(); ++i) {
      Variable p = grp.params[i];
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      check_grad(p, grad, who);
      ParamState& st = state_[g][i];
      Tensor data = p.data();
      if (!data.is_contiguous()) {  // the fused kernel wants flat arrays
        data = data.contiguous();
        p.set_data(data);
      }
      Tensor& m = st.buffers["exp_avg"];
      Tensor& v = st.buffers["exp_avg_sq"];
      if (!m.defined()) m = Tensor::zeros(data.shape(), data.dtype(), data.device());
      if (!v.defined()) v = Tensor::zeros(data.shape(), data.dtype(), data.device());
      ++st.step;
      const AdamStepOptions o{grp.lr, opts_.beta1, opts_.beta2, opts_.eps, grp.weight_decay, decoupled_, st.step};
      adam_step_(data, grad, m, v, o);
    }
  }
}

json Adam::hyper_json() const {
  return {{"beta1", opts_.beta1}, {"beta2", opts_.beta2}, {"eps", opts_.eps}};
}

void Adam::load_hyper_json(const json& j) {
  opts_.beta1 = j.at("beta1").get<double>();
  opts_.beta2 = j.at("beta2").get<double>();
  opts_.eps = j.at("eps").get<double>();
}

// ---------------------------------------------------------------- SGD

SGD::SGD(std::vector<Variable> params, SGDOptions opts) : SGD(one_group(std::move(params)), opts) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions opts)
    : Optimizer(std::move(groups), opts.lr, opts.weight_decay), opts_(opts) {
  if (!(opts_.momentum >= 0)) throw std::invalid_argument("SGD: invalid momentum " + std::to_string(opts_.momentum));
  if (opts_.nesterov && (opts_.momentum <= 0 || opts_.dampening != 0))
    throw std::invalid_argument("SGD: nesterov momentum requires a momentum > 0 and zero dampening");
}

void SGD::step() {
  NoGradGuard no_grad;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& grp = groups_[g];
    for (size_t i = 0; i < grp.params.size(); ++i) {
      Variable p = grp.params[i];
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      check_grad(p, grad, "SGD");
      ParamState& st = state_[g][i];
      Tensor data = p.data();  // a handle on the parameter's storage
      Tensor d = grad;
      if (grp.weight_decay != 0) d = d + data * grp.weight_decay;
      if (opts_.momentum != 0) {
        Tensor& buf = st.buffers["momentum_buffer"];
        if (!buf.defined())
          buf = d.clone();
        else
          buf = buf * opts_.momentum + d * (1.0 - opts_.dampening);
        d = opts_.nesterov ? d + buf * opts_.momentum : buf;
      }
      ++st.step;
      data.copy_(data - d * grp.lr);  // in place: copy_ bumps the version
    }
  }
}

json SGD::hyper_json() const {
  return {{"momentum", opts_.momentum}, {"dampening", opts_.dampening}, {"nesterov", opts_.nesterov}};
}

void SGD::load_hyper_json(const json& j) {
  opts_.momentum = j.at("momentum").get<double>();
  opts_.dampening = j.at("dampening").get<double>();
  opts_.nesterov = j.at("nesterov").get<bool>();
}

}  // namespace nl
