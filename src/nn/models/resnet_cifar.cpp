#include "nn/models/resnet_cifar.h"

#include <algorithm>
#include <stdexcept>

#include "autograd/functions.h"
#include "nn/activation.h"
#include "nn/norm/factory.h"

namespace nl {

ResNetCifar::ResNetCifar(const ResNetCifarConfig& cfg) : Module("ResNetCifar"), cfg_(cfg) {
  if (cfg.depth < 8 || (cfg.depth - 2) % 6 != 0)
    throw std::invalid_argument("ResNetCifar: depth must be 6n + 2 with n >= 1 (20, 32, 44, 56, 110), got " +
                                std::to_string(cfg.depth));
  const int64_t n = (cfg.depth - 2) / 6;
  stem_ = register_module("stem", std::make_shared<Conv2d>(cfg.in_channels, 16, 3, 1, 1, false));
  stem_norm_ = register_module("stem_norm", make_image_norm(cfg.norm, 16, cfg.groups));
  int64_t in = 16;
  for (int64_t stage = 0; stage < 3; ++stage) {
    const int64_t out = 16 << stage;
    for (int64_t i = 0; i < n; ++i) {
      const std::string p = "layer" + std::to_string(stage + 1) + "_" + std::to_string(i) + "_";
      Block b;
      b.in = in;
      b.out = out;
      b.stride = (stage > 0 && i == 0) ? 2 : 1;
      b.conv1 = register_module(p + "conv1", std::make_shared<Conv2d>(in, out, 3, b.stride, 1, false));
      b.norm1 = register_module(p + "norm1", make_image_norm(cfg.norm, out, cfg.groups));
      b.conv2 = register_module(p + "conv2", std::make_shared<Conv2d>(out, out, 3, 1, 1, false));
      b.norm2 = register_module(p + "norm2", make_image_norm(cfg.norm, out, cfg.groups));
      blocks_.push_back(b);
      in = out;
    }
  }
  fc_ = register_module("fc", std::make_shared<Linear>(64, cfg.classes));
}

Variable ResNetCifar::forward(const Variable& x) {
  if (x.dim() != 4 || x.size(1) != cfg_.in_channels)
    throw std::invalid_argument("ResNetCifar: input must be [N, " + std::to_string(cfg_.in_channels) + ", H, W], got " +
                                shape_str(x.shape()));
  Variable h = (*stem_norm_)((*stem_)(x));
  for (const Block& b : blocks_) {
    Variable y = (*b.norm2)((*b.conv2)((*b.norm1)((*b.conv1)(h))));
    Variable s = h;
    if (b.stride != 1 || b.in != b.out) {  // option A: subsample, zero-pad the new channels
      s = slice(slice(h, 2, 0, h.size(2), b.stride), 3, 0, h.size(3), b.stride);
      Tensor z = Tensor::zeros({s.size(0), b.out - b.in, s.size(2), s.size(3)}, s.dtype(), s.device());
      s = cat({s, Variable(z)}, 1);
    }
    h = y + s;
  }
  return (*fc_)(mean(h, {2, 3}));
}

}  // namespace nl
