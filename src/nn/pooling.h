#pragma once
// Max pooling layer, as torch.nn.MaxPool2d (square window).
#include "nn/module.h"

namespace nl {

/// x [N, C, H, W] -> [N, C, (H + 2p - k)/s + 1, (W + 2p - k)/s + 1], max over each k x k window;
/// the gradient goes to the window's (first) arg-max. stride 0 means stride = kernel.
/// Throws std::invalid_argument on kernel < 1, stride < 0 or padding < 0.
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0);
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  int64_t kernel_size, stride, padding;
};

}  // namespace nl
