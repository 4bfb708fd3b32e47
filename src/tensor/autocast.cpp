#include "tensor/autocast.h"

#include <stdexcept>
#include <string>

namespace nl {
namespace {
thread_local std::optional<DType> t_dtype;        // the active autocast dtype of this thread
thread_local AutocastTrace* t_trace = nullptr;  // the innermost active trace
}  // namespace

const std::vector<AutocastRule>& autocast_table() {
  // The policy (PyTorch autocast's lists; docs/mixed-precision.md): products run on bfloat16 operands
  // with float32 accumulation; whatever needs range or sums many terms stays float32.
  static const std::vector<AutocastRule> table = {
      {AutocastOp::MatMul, "matmul", CastPolicy::Lower},
      {AutocastOp::Linear, "linear", CastPolicy::Lower},
      {AutocastOp::Attention, "attention products", CastPolicy::Lower},
      {AutocastOp::FFN, "ffn products", CastPolicy::Lower},
      {AutocastOp::Conv2d, "conv2d", CastPolicy::Lower},
      {AutocastOp::Gemm, "gemm", CastPolicy::Lower},
      {AutocastOp::Norm, "norm", CastPolicy::Float32},
      {AutocastOp::Softmax, "softmax", CastPolicy::Float32},
      {AutocastOp::CrossEntropy, "cross_entropy", CastPolicy::Float32Math},
      {AutocastOp::Reduction, "reduction", CastPolicy::Float32},
      {AutocastOp::Optimizer, "optimizer", CastPolicy::Float32},
  };
  return table;
}

const AutocastRule& autocast_rule(AutocastOp op) {
  const auto& t = autocast_table();
  const size_t i = static_cast<size_t>(op);
  if (i >= t.size() || t[i].op != op)
    throw std::logic_error("autocast_rule: op " + std::to_string(i) + " has no row in the autocast table");
  return t[i];
}

std::optional<DType> autocast_dtype() { return t_dtype; }

AutocastGuard::AutocastGuard(DType dtype, bool enabled) : prev_(t_dtype) {
  if (dtype != DType::BFloat16)
    throw std::invalid_argument("AutocastGuard: autocast lowers products to bfloat16 only, got " + dtype_name(dtype));
  t_dtype = enabled ? std::optional<DType>(dtype) : std::nullopt;
}

AutocastGuard::~AutocastGuard() { t_dtype = prev_; }

std::optional<DType> autocast_cast_to(AutocastOp op, DType in) {
  if (!t_dtype) return std::nullopt;
  switch (autocast_rule(op).policy) {
    case CastPolicy::Lower:
      if (in == DType::Float32) return *t_dtype;
      return std::nullopt;
    case CastPolicy::Float32:
      if (in == *t_dtype) return DType::Float32;
      return std::nullopt;
    case CastPolicy::Float32Math:
      return std::nullopt;
  }
  return std::nullopt;
}

void autocast_observe(AutocastOp op, DType dt) {
  if (t_trace) t_trace->entries_.emplace_back(op, dt);
}

AutocastTrace::AutocastTrace() : prev_(t_trace) { t_trace = this; }
AutocastTrace::~AutocastTrace() { t_trace = prev_; }

bool AutocastTrace::allowed(AutocastOp op, DType dt) {
  if (dt == DType::Float64) return true;
  switch (autocast_rule(op).policy) {
    case CastPolicy::Lower: return dt == DType::BFloat16;
    case CastPolicy::Float32: return dt == DType::Float32;
    case CastPolicy::Float32Math: return dt == DType::Float32 || dt == DType::BFloat16;
  }
  return false;
}

}  // namespace nl
