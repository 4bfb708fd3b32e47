#include "autograd/variable.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "autograd/anomaly.h"
#include "autograd/node.h"
#include "autograd/tape.h"
#include "tensor/ops.h"

namespace nl {

Variable::Variable(Tensor data, bool requires_grad, std::string name) : impl_(std::make_shared<VariableImpl>()) {
  if (requires_grad && !is_floating(data.dtype()))
    throw std::invalid_argument("only float tensors can require gradients (got " + dtype_name(data.dtype()) + ")");
  impl_->data = std::move(data);
  impl_->requires_grad = requires_grad;
  impl_->name = std::move(name);
}

const Tensor& Variable::data() const {
  if (!impl_) throw std::logic_error("use of an undefined Variable");
  return impl_->data;
}

void Variable::set_data(const Tensor& t) {
  if (!impl_) throw std::logic_error("use of an undefined Variable");
  impl_->data = t;
  t.bump_version();
}

const Tensor& Variable::grad() const {
  if (!impl_) throw std::logic_error("use of an undefined Variable");
  return impl_->grad;
}

void Variable::set_grad(const Tensor& g) {
  if (g.defined() && g.shape() != shape())
    throw std::invalid_argument("set_grad: gradient shape " + shape_str(g.shape()) + " differs from " +
                                shape_str(shape()));
  impl_->grad = g;
}

void Variable::zero_grad() {
  if (impl_) impl_->grad = Tensor();
}

Variable& Variable::requires_grad_(bool on) {
  if (!impl_) throw std::logic_error("use of an undefined Variable");
  if (!is_leaf()) throw std::logic_error("requires_grad_ can only change leaf variables");
  if (on && !is_floating(dtype())) throw std::invalid_argument("only float tensors can require gradients");
  impl_->requires_grad = on;
  return *this;
}

Variable& Variable::retain_grad() {
  if (!impl_) throw std::logic_error("use of an undefined Variable");
  impl_->retain_grad = true;
  return *this;
}

const std::string& Variable::name() const {
  static const std::string empty;
  return impl_ ? impl_->name : empty;
}

Variable& Variable::set_name(std::string n) {
  impl_->name = std::move(n);
  return *this;
}

namespace {
void accumulate(Tensor& slot, const Tensor& g) { slot = slot.defined() ? add(slot, g) : g; }
// Leaf gradients are stored contiguous (optimizers read them as flat arrays).
void accumulate_leaf(Tensor& slot, const Tensor& g) { slot = slot.defined() ? add(slot, g) : g.contiguous(); }

std::string node_label(const Node& n) { return "node #" + std::to_string(n.id) + " '" + n.name + "'"; }
}  // namespace

void Variable::backward(const Tensor& grad, bool retain_graph) const {
  if (!impl_) throw std::logic_error("backward on an undefined Variable");
  if (!impl_->requires_grad)
    throw std::logic_error("backward: this variable does not require grad (no input of the graph had "
                           "requires_grad=true, or it was computed under NoGradGuard or detached)");
  Tensor g0 = grad;
  if (!g0.defined()) {
    if (numel() != 1)
      throw std::invalid_argument("backward: a gradient is needed for a non-scalar output of shape " +
                                  shape_str(shape()));
    g0 = Tensor::ones(shape(), dtype(), device());
  } else if (g0.shape() != shape()) {
    throw std::invalid_argument("backward: gradient shape " + shape_str(g0.shape()) + " differs from output " +
                                shape_str(shape()));
  }
  if (!impl_->grad_fn) {  // a leaf
    accumulate_leaf(impl_->grad, g0);
    return;
  }
  // Collect the nodes reachable from this output (iteratively: deep graphs must not overflow the
  // stack), then visit them in reverse recording order, which is a reverse topological order.
  std::vector<Node*> order;
  std::unordered_set<Node*> seen;
  std::vector<Node*> stack{impl_->grad_fn.get()};
  seen.insert(stack.back());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (n->released)
      throw std::runtime_error("backward through " + node_label(*n) +
                               " a second time: its saved tensors were freed by the first backward. "
                               "Pass retain_graph=true to the first backward() if you need two passes.");
    order.push_back(n);
    for (const auto& in : n->inputs)
      if (in->requires_grad && in->grad_fn && seen.insert(in->grad_fn.get()).second) stack.push_back(in->grad_fn.get());
  }
  std::sort(order.begin(), order.end(), [](Node* a, Node* b) { return a->id > b->id; });
  for (Node* n : order) n->grad_out = Tensor();
  impl_->grad_fn->grad_out = g0;
  for (Node* n : order) {
    Tensor go = std::move(n->grad_out);
    n->grad_out = Tensor();
    if (go.defined())
      if (auto out = n->output.lock(); out && out->retain_grad) accumulate(out->grad, go);
    if (!go.defined() || n->is_detach) {
      if (!retain_graph) n->release();
      continue;
    }
    n->check_versions();
    std::vector<bool> needs(n->inputs.size());
    for (size_t i = 0; i < n->inputs.size(); ++i) needs[i] = n->inputs[i]->requires_grad;
    std::vector<Tensor> gin = n->backward(go, needs);
    if (gin.size() != n->inputs.size())
      throw std::logic_error(node_label(*n) + " returned " + std::to_string(gin.size()) + " gradients for " +
                             std::to_string(n->inputs.size()) + " inputs");
    for (size_t i = 0; i < gin.size(); ++i) {
      auto& in = n->inputs[i];
      if (!needs[i] || !gin[i].defined()) continue;
      check_finite(gin[i], n->name + " (backward)", "input gradient");
      if (gin[i].shape() != in->data.shape())
        throw std::logic_error(node_label(*n) + " returned a gradient of shape " + shape_str(gin[i].shape()) +
                               " for input " + std::to_string(i) + " of shape " + shape_str(in->data.shape()));
      if (in->grad_fn)
        accumulate(in->grad_fn->grad_out, gin[i]);
      else
        accumulate_leaf(in->grad, gin[i]);
    }
    if (!retain_graph) n->release();
  }
}

}  // namespace nl
