// Variable::backward: the engine. It walks the graph from the root once to count, for every reachable
// node, how many consumers will send it a gradient, then runs nodes from a ready stack as soon as all
// their consumers have run (PyTorch's engine, single-threaded). The order depends only on the graph's
// edges, never on node ids, so graphs recorded on several threads are handled the same way.
#include <atomic>
#include <stdexcept>

#include "autograd/anomaly.h"
#include "autograd/node.h"
#include "autograd/post_backward.h"
#include "autograd/tape.h"
#include "tensor/ops.h"

namespace nl {

namespace {
std::atomic<uint64_t> g_pass{0};  // numbers backward passes, so nodes need no reset between passes
// The running node's accumulation targets (accumulated_gradient), one per input; null outside a backward.
thread_local const std::vector<Tensor>* t_targets = nullptr;

std::string node_label(const Node& n) { return "node #" + std::to_string(n.id) + " '" + n.name + "'"; }

// Shape of the input whose gradient goes to `m` (a leaf's current shape for a sink).
const Shape& input_shape(const Node& m) { return m.is_leaf_sink() ? m.leaf->data.shape() : m.out_shape; }

// Whether the gradient for an input should be computed and sent along edge `e`.
bool wants_grad(const Edge& e) {
  const Node* n = e.node.get();
  return n && !n->is_detach && (!n->is_leaf_sink() || n->leaf->requires_grad);
}

// Whether t is the only handle to all of its storage, so that changing it in place changes nothing else.
// A gradient the engine hands out (a leaf's or a retained grad) must be (`owned`): `g` is taken by value;
// when this is the only handle to its storage, it is kept, otherwise it is copied.
bool sole_owner(const Tensor& t) {
  return t.storage().use_count() == 1 && t.is_contiguous() && t.offset() == 0 &&
         t.storage()->nbytes() == (size_t)t.numel() * dtype_size(t.dtype());
}
Tensor owned(Tensor g) { return sole_owner(g) ? g : g.clone(); }

// bfloat16 takes no elementwise ops: a sum with a bfloat16 gradient is taken in float32 (or the other's
// wider dtype).
DType sum_dtype(DType a, DType b) {
  const DType w = dtype_size(a) >= dtype_size(b) ? a : b;
  return w == DType::BFloat16 ? DType::Float32 : w;
}
// Adds g into a gradient that is handed out (a leaf's, or one retain_grad() keeps), which keeps its dtype:
// the first gradient is made owned; later ones create a new tensor (out of place, so views the user took of
// the old one are not changed).
void accumulate_owned(Tensor& slot, Tensor g) {
  if (!slot.defined()) {
    slot = owned(std::move(g));
    return;
  }
  const DType keep = slot.dtype(), t = sum_dtype(keep, g.dtype());
  slot = add(slot.to(t), g.to(t)).to(keep);
}
// Adds g into an internal gradient buffer (never seen by the user; may alias): in place when the buffer is
// the only handle to its storage (no other gradient, saved tensor or view shares it) and g matches it, which
// saves a new buffer and a pass over memory per sum; otherwise into a new tensor. The same values either way.
// Gradients of one tensor may arrive in two float dtypes under autocast (a product returns a float32
// gradient for its bfloat16 operand, a bfloat16 one for a bfloat16 input that arrived so): the sum is taken
// in the wider one, float32 for two bfloat16 gradients.
void accumulate(Tensor& slot, Tensor g) {
  if (slot.defined() && (slot.dtype() != g.dtype() || g.dtype() == DType::BFloat16)) {
    const DType t = sum_dtype(slot.dtype(), g.dtype());
    slot = slot.to(t);
    g = g.to(t);
  }
  if (!slot.defined()) {
    slot = std::move(g);
  } else if (sole_owner(slot) && slot.shape() == g.shape() && slot.dtype() == g.dtype() &&
             slot.device() == g.device()) {
    binary_into(BinaryOp::Add, slot, slot, g);
  } else {
    slot = add(slot, g);
  }
}
// Whether a and b are one tensor: the same storage, offset, shape and dtype.
bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.storage() == b.storage() && a.offset() == b.offset() &&
         a.shape() == b.shape() && a.dtype() == b.dtype();
}
}  // namespace

Tensor accumulated_gradient(size_t i) {
  return t_targets && i < t_targets->size() ? (*t_targets)[i] : Tensor();
}

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
    accumulate_owned(impl_->grad, g0);
    return;
  }
  // 1. Discover the nodes reachable from the root (iteratively: deep graphs must not overflow the
  //    stack) and count each one's pending consumers.
  const uint64_t pass = ++g_pass;
  Node* root = impl_->grad_fn.get();
  std::vector<Node*> reached{root};
  std::vector<Node*> stack{root};
  root->visit = pass;
  root->pending = 0;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (n->released)
      throw std::runtime_error("backward through " + node_label(*n) +
                               " a second time: its saved tensors were freed by the first backward. "
                               "Pass retain_graph=true to the first backward() if you need two passes.");
    for (const Edge& e : n->next) {
      if (!wants_grad(e)) continue;
      Node* m = e.node.get();
      if (m->visit != pass) {
        m->visit = pass;
        m->pending = 0;
        m->grad_out = Tensor();
        reached.push_back(m);
        stack.push_back(m);
      }
      ++m->pending;
    }
  }
  // 2. Run nodes whose consumers have all sent their gradient.
  root->grad_out = g0;
  std::vector<bool> needs, summed;  // summed[i]: gin[i] already holds the input's earlier gradients
  std::vector<Tensor> targets;      // the inputs' buffers a backward may add into (accumulated_gradient)
  PostBackwardScope callbacks;  // 3. (below) module state updates queued by backward closures
  try {
    stack.push_back(root);
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      Tensor go = std::move(n->grad_out);
      n->grad_out = Tensor();
      if (n->is_leaf_sink()) {
        // A leaf's gradient has the leaf's dtype (a mixed-precision product sends float32 to a bfloat16 leaf).
        if (go.defined() && go.dtype() != n->leaf->data.dtype()) go = go.to(n->leaf->data.dtype());
        if (go.defined()) accumulate_owned(n->leaf->grad, std::move(go));
        continue;
      }
      if (go.defined())
        if (auto out = n->output.lock(); out && out->retain_grad) accumulate_owned(out->grad, go);
      std::vector<Tensor> gin;
      needs.assign(n->next.size(), false);
      for (size_t i = 0; i < n->next.size(); ++i) needs[i] = wants_grad(n->next[i]);
      summed.assign(n->next.size(), false);
      if (go.defined()) {
        n->check_versions();
        // op nodes' sums held by nothing else
        targets.assign(n->next.size(), Tensor());
        for (size_t i = 0; i < n->next.size(); ++i) {
          const Node* m = needs[i] ? n->next[i].node.get() : nullptr;
          if (m && !m->is_leaf_sink() && m->grad_out.defined() && sole_owner(m->grad_out)) targets[i] = m->grad_out;
        }
        struct TargetScope {  // restored on every exit, exceptions included
          const std::vector<Tensor>* prev;
          ~TargetScope() { t_targets = prev; }
        } scope{t_targets};
        t_targets = &targets;
        gin = n->backward(go, needs);
        if (gin.size() != n->next.size())
          throw std::logic_error(node_label(*n) + " returned " + std::to_string(gin.size()) + " gradients for " +
                                 std::to_string(n->next.size()) + " inputs");
        for (size_t i = 0; i < n->next.size(); ++i) summed[i] = same_tensor(gin[i], targets[i]);
        targets.clear();  // our handles go before the sums below, which add in place only into sole owners
      }
      for (size_t i = 0; i < n->next.size(); ++i) {
        if (!needs[i]) continue;
        Node* m = n->next[i].node.get();
        if (!gin.empty() && gin[i].defined()) {
          check_finite(gin[i], std::string(n->name) + " (backward)", "input gradient");
          if (gin[i].shape() != input_shape(*m))
            throw std::logic_error(node_label(*n) + " returned a gradient of shape " + shape_str(gin[i].shape()) +
                                   " for input " + std::to_string(i) + " of shape " + shape_str(input_shape(*m)));
          if (summed[i])
            m->grad_out = std::move(gin[i]);  // the backward added into m's buffer itself
          else
            accumulate(m->grad_out, std::move(gin[i]));
        }
        if (--m->pending == 0) stack.push_back(m);
      }
      if (!retain_graph) n->release();
    }
  } catch (...) {
    for (Node* n : reached) n->grad_out = Tensor();  // free partial gradients
    throw;
  }
  // 3. Every node has run: the owners of deferred state updates apply them now (post_backward.h).
  callbacks.finish();
}

}  // namespace nl
