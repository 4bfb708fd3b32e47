#include "nn/conv2d.h"

#include <cmath>

#include "nn/init.h"

namespace nl {

Conv2d::Conv2d(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, bool with_bias, DType dtype)
    : Module("Conv2d"), in_channels(in), out_channels(out), kernel_size(k), stride(s), padding(p) {
  if (in < 1 || out < 1 || k < 1 || s < 1 || p < 0)
    throw std::invalid_argument("Conv2d: need in, out, kernel, stride >= 1 and padding >= 0, got in=" +
                                std::to_string(in) + " out=" + std::to_string(out) + " k=" + std::to_string(k) +
                                " stride=" + std::to_string(s) + " padding=" + std::to_string(p));
  Tensor w = Tensor::empty({out, in, k, k}, dtype);
  init::kaiming_uniform_(w, std::sqrt(5.0));
  weight = register_parameter("weight", w);
  if (with_bias) {
    Tensor b = Tensor::empty({out}, dtype);
    const double bound = 1.0 / std::sqrt((double)(in * k * k));
    init::uniform_(b, -bound, bound);
    bias = register_parameter("bias", b);
  }
}

Variable Conv2d::forward(const Variable& x) {
  if (x.dim() != 4 || x.size(1) != in_channels)
    throw std::invalid_argument("Conv2d(" + std::to_string(in_channels) + " -> " + std::to_string(out_channels) +
                                "): input must be [N, " + std::to_string(in_channels) + ", H, W], got " +
                                shape_str(x.shape()));
  return conv2d(x, weight, bias, stride, padding);
}

std::string Conv2d::extra_repr() const {
  return "in=" + std::to_string(in_channels) + ", out=" + std::to_string(out_channels) +
         ", kernel=" + std::to_string(kernel_size) + ", stride=" + std::to_string(stride) +
         ", padding=" + std::to_string(padding) + ", bias=" + (bias.defined() ? "true" : "false");
}

}  // namespace nl
