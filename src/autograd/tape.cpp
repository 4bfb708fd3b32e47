#include "autograd/tape.h"

#include "autograd/anomaly.h"

#include <sstream>
#include <stdexcept>

namespace nl {

namespace {
thread_local bool t_grad_enabled = true;
}

const Tensor& Node::save(const Tensor& t, std::string what) {
  saved.push_back({t, t.version(), std::move(what)});
  return saved.back().tensor;
}

Node::~Node() {
  std::vector<std::shared_ptr<VariableImpl>> stack = std::move(inputs);
  while (!stack.empty()) {
    std::shared_ptr<VariableImpl> v = std::move(stack.back());
    stack.pop_back();
    // If we hold the last reference to v and v holds the last one to its producer, adopt the
    // producer's inputs so that destroying it (when v goes out of scope here) recurses no further.
    if (v.use_count() == 1 && v->grad_fn && v->grad_fn.use_count() == 1) {
      for (auto& in : v->grad_fn->inputs) stack.push_back(std::move(in));
      v->grad_fn->inputs.clear();
    }
  }
}

void Node::check_versions() const {
  for (const auto& s : saved)
    if (s.tensor.defined() && s.tensor.version() != s.version)
      throw std::runtime_error("node #" + std::to_string(id) + " '" + name + "': its saved " + s.what + " of shape " +
                               shape_str(s.tensor.shape()) + " was modified in place after it was saved (version " +
                               std::to_string(s.version) + " when saved, " + std::to_string(s.tensor.version()) +
                               " now); the gradient would be wrong. Use an out-of-place op instead.");
}

void Node::release() {
  saved.clear();
  backward = nullptr;
  released = true;
}

Tape& Tape::current() {
  thread_local Tape tape;
  return tape;
}

void Tape::record(const std::shared_ptr<Node>& n) {
  n->id = next_id_++;
  if (nodes_.size() >= 4096 && (nodes_.size() & (nodes_.size() - 1)) == 0) {  // compact now and then
    std::vector<std::weak_ptr<Node>> live;
    for (auto& w : nodes_)
      if (!w.expired()) live.push_back(w);
    nodes_.swap(live);
  }
  nodes_.push_back(n);
}

std::vector<std::shared_ptr<Node>> Tape::nodes() const {
  std::vector<std::shared_ptr<Node>> out;
  for (auto& w : nodes_)
    if (auto n = w.lock()) out.push_back(n);
  return out;
}

size_t Tape::size() const { return nodes().size(); }

void Tape::clear() { nodes_.clear(); }

std::string Tape::dump() const {
  auto ns = nodes();
  std::ostringstream o;
  o << "tape: " << ns.size() << " node" << (ns.size() == 1 ? "" : "s") << "\n";
  for (auto& n : ns) {
    std::ostringstream ins;
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const auto& in = n->inputs[i];
      if (i) ins << ", ";
      if (in->grad_fn) {
        ins << "#" << in->grad_fn->id;
        if (in->grad_fn->is_detach) ins << "(detached)";
      } else {
        ins << (in->name.empty() ? std::string("leaf") : in->name);
        ins << (in->requires_grad ? "" : "(no grad)");
      }
    }
    o << "  #" << n->id << " " << n->name;
    if (!n->note.empty()) o << " {" << n->note << "}";
    o << " <- " << ins.str() << " -> " << shape_str(n->out_shape);
    if (n->is_detach) o << "   [detach: gradient stops here]";
    if (n->released) o << "   (released)";
    o << "\n";
  }
  return o.str();
}

bool grad_enabled() { return t_grad_enabled; }

NoGradGuard::NoGradGuard() : prev_(t_grad_enabled) { t_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { t_grad_enabled = prev_; }

SavedTensor saved(const Tensor& t, std::string what) { return {t, t.version(), std::move(what)}; }

Variable make_result(Tensor out, const char* name, const std::vector<Variable>& inputs, BackwardFn backward,
                     std::vector<SavedTensor> saved_tensors, std::string note) {
  check_finite(out, name, "output");
  bool any = false;
  if (t_grad_enabled)
    for (const auto& v : inputs) any = any || v.requires_grad();
  if (!any) return Variable(std::move(out));
  auto n = std::make_shared<Node>();
  n->name = name;
  n->note = std::move(note);
  n->backward = std::move(backward);
  n->saved = std::move(saved_tensors);
  n->out_shape = out.shape();
  n->out_dtype = out.dtype();
  for (const auto& v : inputs) n->inputs.push_back(v.impl());
  Tape::current().record(n);
  auto impl = std::make_shared<VariableImpl>();
  impl->data = std::move(out);
  impl->requires_grad = true;
  n->output = impl;
  impl->grad_fn = std::move(n);
  return Variable::from_impl(std::move(impl));
}

}  // namespace nl
