#include "autograd/tape.h"

#include "autograd/anomaly.h"

#include <cstdio>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace nl {

namespace {
thread_local bool t_grad_enabled = true;
}

Node::~Node() {
  std::vector<Edge> stack = std::move(next);  // reuses this node's edge buffer: no allocation
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back().node);
    stack.pop_back();
    // If we hold the last reference to n, adopt its edges so that destroying it (when n goes out of
    // scope here) recurses no further.
    if (n && n.use_count() == 1) {
      for (auto& e : n->next) stack.push_back(std::move(e));
      n->next.clear();
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

Edge gradient_edge(const Variable& v) {
  const auto& impl = v.impl();
  if (!impl) return {};
  if (impl->grad_fn) return {impl->grad_fn};
  if (!impl->requires_grad) return {};
  static std::mutex sink_mutex;  // threads recording ops on the same leaf share one sink
  std::lock_guard<std::mutex> lock(sink_mutex);
  if (auto sink = impl->grad_accumulator.lock()) return {std::move(sink)};
  auto sink = std::make_shared<Node>();
  sink->name = "LeafSink";
  sink->leaf = impl;
  impl->grad_accumulator = sink;
  return {std::move(sink)};
}

Tape& Tape::current() {
  thread_local Tape tape;
  return tape;
}

void Tape::record(const std::shared_ptr<Node>& n) {
  n->id = next_id_++;
  if (nodes_.size() >= compact_at_) {  // drop dead entries; amortised O(1) per record
    std::erase_if(nodes_, [](const std::weak_ptr<Node>& w) { return w.expired(); });
    compact_at_ = 2 * nodes_.size() + 64;
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

void Tape::clear() {
  nodes_.clear();
  compact_at_ = 64;
}

std::string note_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

namespace {
// Writes how Tape::dump names input i of n: "#id" of its producer (marked "(detached)" after a Detach),
// the leaf's name (or "leaf"), with "(no grad)" for a leaf that does not require grad.
void write_input_label(std::ostream& o, const Node& n, size_t i) {
  const Node* p = n.next[i].node.get();
  if (p && !p->is_leaf_sink()) {
    o << "#" << p->id << (p->is_detach ? "(detached)" : "");
  } else if (p) {
    const VariableImpl& leaf = *p->leaf;
    o << (leaf.name.empty() ? "leaf" : leaf.name.c_str()) << (leaf.requires_grad ? "" : "(no grad)");
  } else {
    const char* name = "leaf";
    for (const auto& [k, nm] : n.nograd_names)
      if (k == i) name = nm.c_str();
    o << name << "(no grad)";
  }
}
}  // namespace

std::string Tape::dump() const {
  auto ns = nodes();
  std::ostringstream o;
  o << "tape: " << ns.size() << " node" << (ns.size() == 1 ? "" : "s") << "\n";
  for (auto& n : ns) {
    o << "  #" << n->id << " " << n->name;
    if (!n->note.empty()) o << " {" << n->note << "}";
    o << " <- ";
    for (size_t i = 0; i < n->next.size(); ++i) {
      if (i) o << ", ";
      write_input_label(o, *n, i);
    }
    o << " -> " << shape_str(n->out_shape);
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

void set_inputs(Node& n, const std::vector<Variable>& inputs) {
  n.next.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    n.next.push_back(gradient_edge(inputs[i]));
    const auto& impl = inputs[i].impl();
    if (!n.next.back().node && impl && !impl->name.empty()) n.nograd_names.emplace_back((uint32_t)i, impl->name);
  }
}

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
  set_inputs(*n, inputs);
  Tape::current().record(n);
  auto impl = std::make_shared<VariableImpl>();
  impl->data = std::move(out);
  impl->requires_grad = true;
  impl->grad_fn = std::move(n);
  return Variable::from_impl(std::move(impl));
}

}  // namespace nl
