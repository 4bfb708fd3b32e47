#include "autograd/variable.h"

#include <stdexcept>

#include "autograd/functions.h"
#include "autograd/node.h"
#include "tensor/ops.h"

namespace nl {

Variable::Variable(Tensor data) : Variable(std::move(data), false) {}

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
  if (impl_->grad_fn) impl_->grad_fn->output = impl_;
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

// Method-style ops: the free functions of autograd/functions.h (qualified: the members hide them here).
Variable Variable::pow(double p) const { return nl::pow(*this, p); }
Variable Variable::sum(const std::vector<int64_t>& dims, bool keepdim) const { return nl::sum(*this, dims, keepdim); }
Variable Variable::sum(int64_t dim, bool keepdim) const { return nl::sum(*this, {dim}, keepdim); }
Variable Variable::mean(const std::vector<int64_t>& dims, bool keepdim) const { return nl::mean(*this, dims, keepdim); }
Variable Variable::mean(int64_t dim, bool keepdim) const { return nl::mean(*this, {dim}, keepdim); }
Variable Variable::exp() const { return nl::exp(*this); }
Variable Variable::log() const { return nl::log(*this); }
Variable Variable::sqrt() const { return nl::sqrt(*this); }
Variable Variable::relu() const { return nl::relu(*this); }
Variable Variable::reshape(const Shape& shape) const { return nl::reshape(*this, shape); }
Variable Variable::transpose(int64_t d0, int64_t d1) const { return nl::transpose(*this, d0, d1); }
Variable Variable::matmul(const Variable& other) const { return nl::matmul(*this, other); }
Variable Variable::detach() const { return nl::detach(*this); }
Variable Variable::to(DType dtype) const { return nl::to_dtype(*this, dtype); }

}  // namespace nl
