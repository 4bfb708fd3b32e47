#pragma once
// Module: the PyTorch-style building block of models. A module owns named parameters (leaf Variables
// with requires_grad), named buffers (plain Tensors saved in state_dict, e.g. running statistics) and
// named sub-modules. Names are dotted paths ("encoder.fc1.weight") in registration order; each
// parameter's Variable carries its full dotted name so Tape::dump() shows it.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/functions.h"

namespace nl {

/// Parameters and buffers by dotted name (what checkpoints store).
using StateDict = std::map<std::string, Tensor>;

class Module {
 public:
  /// `type_name` is the class name shown by repr() and error messages ("Linear", "LayerNorm").
  explicit Module(std::string type_name);
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

 protected:
  /// Moving keeps the parameters, buffers, children and hooks (all handles); a subclass that declares
  /// nothing of its own is movable (Sequential, Linear, ...), so `return net;` and
  /// `Sequential{Linear(4, 8), ReLU()}` work.
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;

 public:

  /// The single-input forward pass. The default throws std::logic_error
  /// ("module X has no single-input forward"): modules with several inputs (attention: query, key,
  /// value, masks) define their own typed forward and operator() instead, and call
  /// run_forward_hooks with all their inputs.
  virtual Variable forward(const Variable& x);
  /// Calls forward(x), then the forward hooks (PyTorch's module(x)).
  Variable operator()(const Variable& x) {
    Variable y = forward(x);
    if (!hooks_.empty()) run_forward_hooks({x}, y);
    return y;
  }

  // ---- hooks (how probes watch a layer without the model knowing) ----
  /// Called after each forward through operator(): (module, inputs, output).
  using ForwardHook = std::function<void(Module&, const std::vector<Variable>&, const Variable&)>;
  /// Adds a hook; returns a handle for remove_forward_hook.
  int register_forward_hook(ForwardHook hook);
  /// Removes a hook by handle (unknown handles are ignored).
  void remove_forward_hook(int handle);
  /// Whether any forward hook is registered (a caller that fuses this module's work into another op
  /// must then call the module itself, so that the hooks see its output).
  bool has_forward_hooks() const { return !hooks_.empty(); }

  // ---- registration ----
  /// Adds a leaf parameter initialised to `init` (requires_grad = true; its Variable name is the full
  /// dotted path). Throws std::invalid_argument on an empty/dotted/duplicate name or a non-float tensor.
  Variable register_parameter(const std::string& name, Tensor init);
  /// Adds a buffer (state that is saved but not trained). Same name rules as parameters.
  void register_buffer(const std::string& name, Tensor value);
  /// Adds a sub-module; its parameters become "name.<their name>". Returns `m` for chaining.
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    add_child(name, std::static_pointer_cast<Module>(m));
    return m;
  }

  // ---- access ----
  /// This module's own parameter `name` (not dotted); throws std::out_of_range if absent.
  Variable param(const std::string& name) const;
  /// This module's own buffer `name`; throws std::out_of_range if absent.
  Tensor buffer(const std::string& name) const;
  /// Replaces buffer `name` (same shape required; throws std::invalid_argument otherwise).
  void set_buffer(const std::string& name, const Tensor& value);
  /// All parameters, recursively, as (dotted name, Variable) in registration order (own first, then
  /// each child in turn).
  std::vector<std::pair<std::string, Variable>> named_parameters() const;
  std::vector<Variable> parameters() const;
  /// All buffers, recursively, as (dotted name, Tensor).
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  /// Direct children in registration order.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  /// This module ("") and every descendant, depth first, with dotted names.
  std::vector<std::pair<std::string, const Module*>> named_modules() const;
  /// Total number of parameter elements.
  int64_t num_parameters() const;

  // ---- state ----
  /// Parameters and buffers by dotted name. The tensors alias the live values (clone to snapshot).
  StateDict state_dict() const;
  /// Copies values from `sd` into the parameters/buffers (dtype converted to the module's). Checks
  /// everything before copying anything, then throws one std::invalid_argument listing every missing
  /// key, every unexpected key (only when `strict`) and every mis-shaped key with both shapes.
  /// Shape mismatches are errors even when !strict (as in PyTorch).
  void load_state_dict(const StateDict& sd, bool strict = true);
  /// Converts every parameter and buffer (float ones) to `dtype`, keeping names and requires_grad.
  void to(DType dtype);
  /// Moves every parameter, its gradient and every buffer to `device`, in place: the parameters keep
  /// their Variables (an optimizer that holds them updates the moved values), so an optimizer built
  /// before the move still steps them, but its existing state (moments) stays where it was: move the
  /// model before building the optimizer. Throws std::invalid_argument ("no CUDA device: ... use
  /// --device cpu") for a device that does not exist.
  void to(Device device);
  /// The device of the first parameter (else of the first defined buffer; cpu for a module with
  /// neither): where inputs of this module must live. Tasks create their eval inputs there.
  Device device() const;

  // ---- mode and gradients ----
  /// Sets training mode on this module and all descendants (Dropout reads it).
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  /// Drops every parameter's gradient (set_to_none semantics).
  void zero_grad();

  // ---- printing ----
  const std::string& type_name() const { return type_name_; }
  /// Same as type_name() (PyTorch's class name).
  std::string name() const { return type_name_; }
  /// Layer-specific settings shown in repr(), e.g. "in=4, out=3, bias=true".
  virtual std::string extra_repr() const { return {}; }
  /// Short one-line description: "Linear(in=4, out=3, bias=true)", or for a container
  /// "Sequential(3 children)". Like Tensor::str().
  std::string str() const;
  /// Full PyTorch-like tree: "Sequential(\n  (0): Linear(in=4, out=3, bias=true)\n ...)". Like Tensor::repr().
  std::string repr() const;

 protected:
  void add_child(const std::string& name, std::shared_ptr<Module> m);
  /// Runs the forward hooks; typed forwards of multi-input modules call it themselves.
  void run_forward_hooks(const std::vector<Variable>& inputs, const Variable& output);

 private:
  void check_new_name(const std::string& name, const char* what) const;
  void set_prefix(const std::string& prefix);  // renames parameters to prefix + name, recursively

  std::string type_name_;
  std::string prefix_;  // dotted path of this module inside its root ("" for the root), ending in '.'
  bool training_ = true;
  std::vector<std::pair<std::string, Variable>> params_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  std::vector<std::pair<int, ForwardHook>> hooks_;
  int next_hook_ = 0;
};

}  // namespace nl
