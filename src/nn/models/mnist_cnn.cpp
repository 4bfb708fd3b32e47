#include "nn/models/mnist_cnn.h"

#include <stdexcept>

#include "autograd/functions.h"
#include "nn/norm/factory.h"

namespace nl {

MnistCnn::MnistCnn(const MnistCnnConfig& cfg) : Module("MnistCnn"), cfg_(cfg) {
  conv1_ = register_module("conv1", std::make_shared<Conv2d>(1, 20, 5));
  conv2_ = register_module("conv2", std::make_shared<Conv2d>(20, 50, 5));
  fc1_ = register_module("fc1", std::make_shared<Linear>(50 * 4 * 4, cfg.hidden));
  norm_ = register_module("norm", make_norm(cfg.norm, cfg.hidden, cfg.norm_opts));
  fc2_ = register_module("fc2", std::make_shared<Linear>(cfg.hidden, cfg.classes));
}

Variable MnistCnn::forward(const Variable& x) {
  if (x.dim() != 4 || x.size(1) != 1 || x.size(2) != 28 || x.size(3) != 28)
    throw std::invalid_argument("MnistCnn: input must be [B, 1, 28, 28], got " + shape_str(x.shape()));
  auto act = [&](const Variable& c) { return cfg_.conv_relu ? relu(c) : c; };
  Variable h = max_pool2d(act((*conv1_)(x)), 2);
  h = max_pool2d(act((*conv2_)(h)), 2);
  h = (*norm_)((*fc1_)(flatten(h, 1)));
  return (*fc2_)(relu(h));
}

}  // namespace nl
