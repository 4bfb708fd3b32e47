#include "nn/pooling.h"

namespace nl {

MaxPool2d::MaxPool2d(int64_t k, int64_t s, int64_t p)
    : Module("MaxPool2d"), kernel_size(k), stride(s == 0 ? k : s), padding(p) {
  if (k < 1 || s < 0 || p < 0)
    throw std::invalid_argument("MaxPool2d: need kernel >= 1, stride >= 0, padding >= 0");
}

Variable MaxPool2d::forward(const Variable& x) {
  if (x.dim() != 4) throw std::invalid_argument("MaxPool2d: input must be [N, C, H, W], got " + shape_str(x.shape()));
  return max_pool2d(x, kernel_size, stride, padding);
}

std::string MaxPool2d::extra_repr() const {
  return "kernel=" + std::to_string(kernel_size) + ", stride=" + std::to_string(stride) +
         ", padding=" + std::to_string(padding);
}

}  // namespace nl
