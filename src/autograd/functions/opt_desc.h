#pragma once
// The Desc of an optional tensor for the fused kernels, whose absent operands are a Desc with data == nullptr.
#include "tensor/tensor.h"

namespace nl {

/// t.desc(), or an empty Desc (data == nullptr: "absent") when t is undefined.
inline Desc opt_desc(const Tensor& t) { return t.defined() ? t.desc() : Desc{}; }

}  // namespace nl
