// Front end of the fused optimizer steps: Adam / AdamW in place (tensor/ops_nn.h).
#include <stdexcept>
#include <string>

#include "tensor/fused_dispatch.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"

namespace nl {

void adam_step_(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamStepOptions& o) {
  observe(AutocastOp::Optimizer, param);
  const char* op = "adam_step";
  check_floating(param, op);
  check_like(op, param, {&grad, &m, &v}, "grad, exp_avg and exp_avg_sq");
  for (const Tensor* t : std::initializer_list<const Tensor*>{&grad, &m, &v})
    if (t->shape() != param.shape())
      throw std::invalid_argument(std::string("adam_step: parameter ") + shape_str(param.shape()) +
                                  " and its gradient / moments " + shape_str(t->shape()) + " differ");
  if (!param.is_contiguous() || !m.is_contiguous() || !v.is_contiguous())
    throw std::invalid_argument("adam_step: the parameter and its moments must be contiguous (call .contiguous())");
  if (o.step < 1) throw std::invalid_argument("adam_step: step must be >= 1, got " + std::to_string(o.step));
  const Tensor gc = grad.contiguous();
  const AdamKernelOpts k{o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, o.decoupled, o.step};
  fused_for(param).adam_step(param.desc(), gc.desc(), m.desc(), v.desc(), k);
  param.bump_version();
  m.bump_version();
  v.bump_version();
}

}  // namespace nl
