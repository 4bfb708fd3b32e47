#pragma once
// Variable: a Tensor value plus what reverse-mode autograd needs — an optional gradient, the Node
// that produced it (none for leaves such as parameters) and `requires_grad`. Copies share state,
// like torch.Tensor handles.
#include <memory>
#include <string>

#include "tensor/tensor.h"

namespace nl {

struct Node;

/// Shared state of a Variable (handles copy the pointer, not the tensor).
struct VariableImpl {
  Tensor data;
  Tensor grad;                     ///< accumulated dL/d(data) for leaves; never modified in place
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;   ///< producer on the tape; null for leaves
  std::string name;                ///< optional label shown by Tape::dump (parameters get theirs)
  bool retain_grad = false;        ///< keep dL/d(data) of a non-leaf after backward (retain_grad())
  /// Leaves that require grad: the graph node that adds incoming gradients to `grad` (created by the
  /// first op that uses this leaf; held weakly, the graph owns it).
  std::weak_ptr<Node> grad_accumulator;
};

/// A tensor that autograd can differentiate: value, gradient, producer node. Copies share state.
class Variable {
 public:
  /// An undefined variable.
  Variable() = default;
  /// Wraps a tensor as a leaf without requires_grad. Implicit, as in PyTorch where tensors and
  /// variables are one type: a Tensor can be passed wherever a `const Variable&` is expected and is
  /// then a constant for autograd. Throws nothing.
  Variable(Tensor data);  // NOLINT(google-explicit-constructor): implicit on purpose
  /// Wraps a tensor as a leaf; set requires_grad for parameters and inputs you differentiate. Throws
  /// std::invalid_argument if requires_grad is set on a non-float tensor.
  Variable(Tensor data, bool requires_grad, std::string name = {});

  bool defined() const { return impl_ != nullptr; }
  const Tensor& data() const;
  /// Replaces the value in place (bumps the version; for optimizers and init, under NoGradGuard).
  void set_data(const Tensor& t);
  /// dL/d(this) after backward(); undefined if no gradient reached it.
  const Tensor& grad() const;
  void set_grad(const Tensor& g);
  /// Drops the gradient (PyTorch's zero_grad(set_to_none=True)).
  void zero_grad();
  bool requires_grad() const { return impl_ && impl_->requires_grad; }
  Variable& requires_grad_(bool on = true);
  /// Asks backward() to store this non-leaf's gradient in grad() too (as torch's retain_grad);
  /// how probes read the gradient arriving at and leaving a layer. No effect on leaves. The producing
  /// node then refers to this variable weakly: retaining a gradient never keeps data alive.
  Variable& retain_grad();
  bool is_leaf() const { return !impl_ || !impl_->grad_fn; }
  Node* grad_fn() const { return impl_ ? impl_->grad_fn.get() : nullptr; }
  const std::string& name() const;
  Variable& set_name(std::string n);

  const Shape& shape() const { return data().shape(); }
  int64_t size(int64_t d) const { return data().size(d); }
  int dim() const { return data().dim(); }
  int64_t numel() const { return data().numel(); }
  DType dtype() const { return data().dtype(); }
  Device device() const { return data().device(); }
  double item() const { return data().item(); }

  // ---- method-style ops, spelled as torch.Tensor's: each calls the free function of
  // autograd/functions.h (same shapes, gradients and errors) and records one node, e.g.
  // `x.pow(2).mean(-1, true)` is `mean(pow(x, 2), {-1}, true)`. Dims may be negative (from the end).
  Variable pow(double p) const;
  /// Sum over `dims` (all when empty), as torch.sum.
  Variable sum(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Variable sum(int64_t dim, bool keepdim = false) const;
  /// Mean over `dims` (all when empty), as torch.mean.
  Variable mean(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Variable mean(int64_t dim, bool keepdim = false) const;
  Variable exp() const;
  Variable log() const;
  Variable sqrt() const;
  Variable relu() const;
  /// A view of the same values as `shape` (one entry may be -1, as torch.reshape).
  Variable reshape(const Shape& shape) const;
  Variable transpose(int64_t d0, int64_t d1) const;
  /// this @ other (see nl::matmul(Tensor, Tensor) for the shapes).
  Variable matmul(const Variable& other) const;
  /// Same values, no gradient flows back (a Detach node on the tape).
  Variable detach() const;
  /// This variable converted to `dtype` through a Cast node (nl::to_dtype, autograd/functions.h).
  Variable to(DType dtype) const;

  /// Reverse-mode pass from this variable. `grad` defaults to 1 for a one-element variable (otherwise
  /// required, same shape). Frees saved tensors unless retain_graph; a second backward through the same
  /// nodes then throws, naming the node. Throws if a saved tensor was modified in place. Nodes run in
  /// dependency order (each after all its consumers), so graphs recorded on several threads work.
  /// Gradients stored in leaves (and retained non-leaves) share storage with no other tensor.
  void backward(const Tensor& grad = {}, bool retain_graph = false) const;

  const std::shared_ptr<VariableImpl>& impl() const { return impl_; }
  static Variable from_impl(std::shared_ptr<VariableImpl> impl) {
    Variable v;
    v.impl_ = std::move(impl);
    return v;
  }

 private:
  std::shared_ptr<VariableImpl> impl_;
};

}  // namespace nl
