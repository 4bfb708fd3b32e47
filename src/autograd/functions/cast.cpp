// Casts as tape nodes (mixed precision, docs/mixed-precision.md): to_dtype records a "Cast" node whose
// backward converts the gradient back to the input's dtype, and `autocast` applies the autocast policy
// table (tensor/autocast.h) to one input of an op, taking a parameter's bfloat16 copy from the weight-cast
// cache (one cast per update, however many products read the weight).
#include <stdexcept>

#include "autograd/functions.h"
#include "tensor/cast_cache.h"

namespace nl {
namespace {
Variable cast_node(const Variable& x, Tensor value, bool cached) {
  const DType from = x.dtype();
  std::string note = dtype_name(from) + " -> " + dtype_name(value.dtype());
  if (cached) note += ", cached";
  // The backward sends the gradient on in x's dtype; a float32 gradient of a float32 x passes unchanged
  // (the products of mixed precision return float32 gradients for their bfloat16 operands).
  return make_result(std::move(value), "Cast", {x},
                     [from](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{g.to(from)}; },
                     {}, std::move(note));
}
}  // namespace

Variable to_dtype(const Variable& x, DType dtype) {
  if (!x.defined()) throw std::invalid_argument("to_dtype: undefined variable");
  if (x.dtype() == dtype) return x;
  if (!is_floating(dtype)) return Variable(x.data().to(dtype));  // no gradient flows through integers
  return cast_node(x, x.data().to(dtype), false);
}

Variable autocast(const Variable& x, AutocastOp op) {
  if (!x.defined()) return x;
  const std::optional<DType> to = autocast_cast_to(op, x.dtype());
  autocast_observe(op, to ? *to : x.dtype());
  if (!to) return x;
  // A parameter (a leaf that requires grad) lives across steps: its copy comes from the cache, made once
  // per update (the optimizer's in-place step bumps the version and so invalidates it).
  const bool param = x.is_leaf() && x.requires_grad();
  return cast_node(x, param ? cached_cast(x.data(), *to) : x.data().to(*to), param);
}

}  // namespace nl
