#pragma once
// Linear (fully connected) layer, as torch.nn.Linear.
#include "nn/module.h"

namespace nl {

/// y = x W^T + b. x [..., in] -> y [..., out]; W [out, in], b [out].
/// Init (PyTorch default): W ~ kaiming_uniform(a = sqrt 5) = U(-1/sqrt(in), 1/sqrt(in)),
/// b ~ U(-1/sqrt(in), 1/sqrt(in)). Throws std::invalid_argument on in or out < 1, and (from nl::linear)
/// when the input's last dim is not `in`.
class Linear : public Module {
 public:
  Linear(int64_t in, int64_t out, bool bias = true, DType dtype = DType::Float32);
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  Variable weight, bias;  ///< bias undefined when built without one
  int64_t in_features, out_features;
  /// Under autocast, write y in bfloat16 rather than float32 (linear()'s autocast_output): set by a module
  /// whose use of this layer feeds only products (MultiheadAttention's q, k, v projections).
  bool autocast_output = false;
};

}  // namespace nl
