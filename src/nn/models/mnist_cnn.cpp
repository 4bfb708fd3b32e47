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
  Variable h = max_pool2d(conv1_->forward(x), 2);
  h = max_pool2d(conv2_->forward(h), 2);
  norm_in_ = fc1_->forward(flatten(h, 1));
  norm_out_ = norm_->forward(norm_in_);
  return fc2_->forward(relu(norm_out_));
}

}  // namespace nl
