#include "nn/module.h"

#include <algorithm>

#include <sstream>
#include <stdexcept>

#include "backends/backend.h"

namespace nl {

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}

int Module::register_forward_hook(ForwardHook hook) {
  hooks_.push_back({next_hook_, std::move(hook)});
  return next_hook_++;
}

void Module::remove_forward_hook(int handle) {
  hooks_.erase(std::remove_if(hooks_.begin(), hooks_.end(), [&](const auto& h) { return h.first == handle; }),
               hooks_.end());
}

void Module::run_forward_hooks(const std::vector<Variable>& inputs, const Variable& output) {
  for (auto& [id, h] : hooks_) h(*this, inputs, output);
}

Variable Module::forward(const Variable&) {
  throw std::logic_error("module " + type_name_ + " has no single-input forward");
}

void Module::check_new_name(const std::string& name, const char* what) const {
  if (name.empty() || name.find('.') != std::string::npos)
    throw std::invalid_argument(type_name_ + ": " + what + " name '" + name + "' must be non-empty and contain no '.'");
  auto taken = [&](const auto& v) {
    for (const auto& [n, _] : v)
      if (n == name) return true;
    return false;
  };
  if (taken(params_) || taken(buffers_) || taken(children_))
    throw std::invalid_argument(type_name_ + ": name '" + name + "' is already registered");
}

Variable Module::register_parameter(const std::string& name, Tensor init) {
  check_new_name(name, "parameter");
  if (!init.defined()) throw std::invalid_argument(type_name_ + ": parameter '" + name + "' is undefined");
  Variable v(std::move(init), /*requires_grad=*/true, prefix_ + name);
  params_.emplace_back(name, v);
  return v;
}

void Module::register_buffer(const std::string& name, Tensor value) {
  check_new_name(name, "buffer");
  buffers_.emplace_back(name, std::move(value));
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> m) {
  check_new_name(name, "module");
  if (!m) throw std::invalid_argument(type_name_ + ": module '" + name + "' is null");
  m->set_prefix(prefix_ + name + ".");
  children_.emplace_back(name, std::move(m));
}

void Module::set_prefix(const std::string& prefix) {
  prefix_ = prefix;
  for (auto& [n, v] : params_) v.set_name(prefix_ + n);
  for (auto& [n, c] : children_) c->set_prefix(prefix_ + n + ".");
}

Variable Module::param(const std::string& name) const {
  for (const auto& [n, v] : params_)
    if (n == name) return v;
  throw std::out_of_range(type_name_ + ": no parameter '" + name + "'");
}

Tensor Module::buffer(const std::string& name) const {
  for (const auto& [n, t] : buffers_)
    if (n == name) return t;
  throw std::out_of_range(type_name_ + ": no buffer '" + name + "'");
}

void Module::set_buffer(const std::string& name, const Tensor& value) {
  for (auto& [n, t] : buffers_)
    if (n == name) {
      if (t.defined() && value.shape() != t.shape())
        throw std::invalid_argument(type_name_ + ": buffer '" + name + "' has shape " + shape_str(t.shape()) +
                                    ", got " + shape_str(value.shape()));
      t = value;
      return;
    }
  throw std::out_of_range(type_name_ + ": no buffer '" + name + "'");
}

std::vector<std::pair<std::string, Variable>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Variable>> out;
  for (const auto& [n, v] : params_) out.emplace_back(n, v);
  for (const auto& [cn, c] : children_)
    for (auto& [n, v] : c->named_parameters()) out.emplace_back(cn + "." + n, v);
  return out;
}

std::vector<Variable> Module::parameters() const {
  std::vector<Variable> out;
  for (auto& [n, v] : named_parameters()) out.push_back(v);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [n, t] : buffers_) out.emplace_back(n, t);
  for (const auto& [cn, c] : children_)
    for (auto& [n, t] : c->named_buffers()) out.emplace_back(cn + "." + n, t);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const { return children_; }

std::vector<std::pair<std::string, const Module*>> Module::named_modules() const {
  std::vector<std::pair<std::string, const Module*>> out{{"", this}};
  for (const auto& [cn, c] : children_)
    for (auto& [n, m] : c->named_modules()) out.emplace_back(n.empty() ? cn : cn + "." + n, m);
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (auto& [_, v] : named_parameters()) n += v.numel();
  return n;
}

StateDict Module::state_dict() const {
  StateDict sd;
  for (auto& [n, v] : named_parameters()) sd[n] = v.data();
  for (auto& [n, t] : named_buffers()) sd[n] = t;
  return sd;
}

void Module::load_state_dict(const StateDict& sd, bool strict) {
  struct Slot {
    Variable param;  // defined for parameters
    Module* owner;   // for buffers
    std::string local;
    Tensor current;
  };
  std::map<std::string, Slot> slots;
  // Collect every slot with its owner so buffers can be replaced in place.
  std::vector<std::pair<std::string, Module*>> mods{{"", this}};
  for (size_t i = 0; i < mods.size(); ++i) {
    auto [prefix, m] = mods[i];
    for (auto& [n, v] : m->params_) slots[prefix + n] = {v, m, n, v.data()};
    for (auto& [n, t] : m->buffers_) slots[prefix + n] = {Variable(), m, n, t};
    for (auto& [cn, c] : m->children_) mods.emplace_back(prefix + cn + ".", c.get());
  }
  std::vector<std::string> missing, unexpected, misshaped;
  for (auto& [k, s] : slots) {
    auto it = sd.find(k);
    if (it == sd.end()) {
      missing.push_back(k);
    } else if (!it->second.defined() || it->second.shape() != s.current.shape()) {
      misshaped.push_back(k + " (checkpoint " + (it->second.defined() ? shape_str(it->second.shape()) : "undefined") +
                          " vs model " + shape_str(s.current.shape()) + ")");
    }
  }
  for (auto& [k, _] : sd)
    if (!slots.count(k)) unexpected.push_back(k);
  const bool fail = !misshaped.empty() || (strict && (!missing.empty() || !unexpected.empty()));
  if (fail) {
    std::ostringstream o;
    o << "load_state_dict(" << type_name_ << "): ";
    auto list = [&](const char* what, const std::vector<std::string>& v) {
      if (v.empty()) return;
      o << "\n  " << what << " (" << v.size() << "): ";
      for (size_t i = 0; i < v.size(); ++i) o << (i ? ", " : "") << v[i];
    };
    list("missing keys", missing);
    if (strict) list("unexpected keys", unexpected);
    list("size mismatch", misshaped);
    throw std::invalid_argument(o.str());
  }
  NoGradGuard ng;
  for (auto& [k, s] : slots) {
    auto it = sd.find(k);
    if (it == sd.end()) continue;
    if (s.param.defined()) {
      Tensor t = it->second.to(s.current.dtype()).to(s.current.device());
      s.param.set_data(t.is_alias_of(it->second) ? t.clone() : t.contiguous());
    } else {
      Tensor t = it->second.to(s.current.dtype()).to(s.current.device());
      s.owner->set_buffer(s.local, t.is_alias_of(it->second) ? t.clone() : t.contiguous());
    }
  }
}

void Module::to(DType dtype) {
  for (auto& [n, v] : params_)
    if (is_floating(v.dtype()) && v.dtype() != dtype) {
      v.set_data(v.data().to(dtype));
      v.zero_grad();
    }
  for (auto& [n, t] : buffers_)
    if (t.defined() && is_floating(t.dtype())) t = t.to(dtype);
  for (auto& [_, c] : children_) c->to(dtype);
}

void Module::to(Device device) {
  check_device(device);
  NoGradGuard ng;
  for (auto& [n, v] : params_) {
    if (v.device() == device) continue;
    const Tensor g = v.grad();
    v.set_data(v.data().to(device));
    if (g.defined()) v.set_grad(g.to(device));
  }
  for (auto& [n, t] : buffers_)
    if (t.defined()) t = t.to(device);
  for (auto& [_, c] : children_) c->to(device);
}

Device Module::device() const {
  for (const auto& [_, v] : named_parameters()) return v.device();
  for (const auto& [_, t] : named_buffers())
    if (t.defined()) return t.device();
  return Device::cpu();
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [_, c] : children_) c->train(on);
}

void Module::zero_grad() {
  for (auto& [_, v] : params_) v.zero_grad();
  for (auto& [_, c] : children_) c->zero_grad();
}

std::string Module::str() const {
  std::string inner = extra_repr();
  if (!children_.empty())
    inner += (inner.empty() ? "" : ", ") + std::to_string(children_.size()) +
             (children_.size() == 1 ? " child" : " children");
  return type_name_ + "(" + inner + ")";
}

std::string Module::repr() const {
  std::ostringstream o;
  o << type_name_ << "(" << extra_repr();
  if (!children_.empty()) {
    o << "\n";
    for (const auto& [n, c] : children_) {
      std::string r = c->repr(), ind;
      for (char ch : r) {
        ind += ch;
        if (ch == '\n') ind += "  ";
      }
      o << "  (" << n << "): " << ind << "\n";
    }
  }
  o << ")";
  return o.str();
}

}  // namespace nl
