// detach: the first-class Detach node. Backward never runs it (nothing flows to its input); recording it on the
// tape is what lets Tape::dump (and `normlab grad explain`) show where gradient flow is cut.
#include "autograd/functions.h"

namespace nl {

Variable detach(const Variable& x) {
  if (!grad_enabled() || !x.requires_grad()) return Variable(x.data());
  auto n = std::make_shared<Node>();
  n->name = "Detach";
  n->is_detach = true;
  set_inputs(*n, {x});  // an edge to x's producer: dump shows what was detached
  n->out_shape = x.shape();
  Tape::current().record(n);
  auto impl = std::make_shared<VariableImpl>();
  impl->data = x.data();        // shares storage, like torch's detach()
  impl->requires_grad = false;  // nothing downstream differentiates through it
  impl->grad_fn = std::move(n); // kept so the tape shows where it came from
  return Variable::from_impl(std::move(impl));
}

}  // namespace nl
