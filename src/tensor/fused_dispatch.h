#pragma once
// Internal to src/tensor (the ops_*.cpp front ends): the one dispatch point of the fused kernels and the
// checks every fused op shares. Not for use above the tensor layer.
#include <initializer_list>
#include <string>

#include "tensor/autocast.h"
#include "tensor/tensor.h"

namespace nl {

/// The fused kernels of x's device (its backend's own, or the composite forms of its core kernels).
inline FusedKernels& fused_for(const Tensor& x) { return backend_for(x.device().type).fused(); }

/// Reports to an active AutocastTrace that a kernel of `op` runs on t's dtype (tensor/autocast.h); an
/// undefined t reports nothing.
inline void observe(AutocastOp op, const Tensor& t) {
  if (t.defined()) autocast_observe(op, t.dtype());
}

/// t.desc(), or an empty Desc (data == nullptr: "absent") when t is undefined.
inline Desc opt_desc(const Tensor& t) { return t.defined() ? t.desc() : Desc{}; }

/// Throws std::invalid_argument naming `op` unless every defined tensor of `others` has ref's dtype and
/// device (`what` names them in the message, e.g. "weight and bias").
inline void check_like(const char* op, const Tensor& ref, std::initializer_list<const Tensor*> others,
                       const char* what) {
  for (const Tensor* t : others)
    if (t->defined() && (t->dtype() != ref.dtype() || t->device() != ref.device()))
      throw std::invalid_argument(std::string(op) + ": " + what + " must have the input's dtype and device (" +
                                  dtype_name(ref.dtype()) + ", " + ref.device().str() + "), got " +
                                  dtype_name(t->dtype()) + ", " + t->device().str() +
                                  "; convert with .to(dtype) / .to(device)");
}

}  // namespace nl
