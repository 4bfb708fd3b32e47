#pragma once
// 2-D convolution layer, as torch.nn.Conv2d (square kernel, same stride and padding on both axes).
#include "nn/module.h"

namespace nl {

/// x [N, in, H, W] -> y [N, out, (H + 2p - k)/s + 1, (W + 2p - k)/s + 1]; W [out, in, k, k], b [out].
/// Init (PyTorch default): W ~ kaiming_uniform(a = sqrt 5) = U(+-1/sqrt(in*k*k)), b ~ U(+-1/sqrt(in*k*k)).
/// Throws std::invalid_argument on non-positive sizes, negative padding, or (from nl::conv2d) a channel
/// mismatch or an output smaller than 1x1.
class Conv2d : public Module {
 public:
  Conv2d(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1, int64_t padding = 0, bool bias = true,
         DType dtype = DType::Float32);
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  Variable weight, bias;
  int64_t in_channels, out_channels, kernel_size, stride, padding;
};

}  // namespace nl
