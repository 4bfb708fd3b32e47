#pragma once
// Dropout layer (Srivastava et al. 2014), inverted form as torch.nn.Dropout.
#include "nn/module.h"

namespace nl {

/// In training mode zeroes each element with probability p and scales the survivors by 1/(1-p)
/// (mask from the global generator, nl::manual_seed); identity in eval mode. Any shape.
/// Throws std::invalid_argument if p is outside [0, 1).
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  double p;
};

}  // namespace nl
