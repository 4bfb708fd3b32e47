#pragma once
// The MNIST CNN of Xu et al. 2019 (appendix A.3): conv 1->20, conv 20->50, flatten, linear. The paper
// gives only these layers; they are PyTorch's MNIST example network of 2018-2019, which is built here:
//   conv 1->20 k5, ReLU, max-pool 2, conv 20->50 k5, ReLU, max-pool 2, flatten (800), linear 800->hidden,
//   norm (before the activation, as the paper applies LayerNorm "before activation in every linear
//   layer"), ReLU, linear hidden->10.
// conv_relu = false drops the two ReLUs after the convolutions (normlab's network before 2026-11-26).
// Input [B, 1, 28, 28] float32; output logits [B, 10].
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "nn/conv2d.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace nl {

/// Configuration of MnistCnn (defaults: the paper's hidden width 500, 10 classes).
struct MnistCnnConfig {
  std::string norm = "layernorm";  ///< any name of norm_names()
  nlohmann::json norm_opts;        ///< passed to make_norm (e.g. {"C": 2.0} for AdaNorm, {"impl": "composite"})
  int64_t hidden = 500;            ///< width of the hidden linear layer
  int64_t classes = 10;
  bool conv_relu = true;           ///< ReLU after each convolution (PyTorch's example network)
};

/// The paper's CNN (see the file comment); parameters conv1, conv2, fc1, norm, fc2.
class MnistCnn : public Module {
 public:
  /// Builds the network; throws std::invalid_argument for an unknown norm or bad options.
  explicit MnistCnn(const MnistCnnConfig& cfg);
  /// x [B, 1, 28, 28] -> logits [B, classes]; throws std::invalid_argument on another input shape.
  Variable forward(const Variable& x) override;
  const MnistCnnConfig& config() const { return cfg_; }

 private:
  MnistCnnConfig cfg_;
  std::shared_ptr<Conv2d> conv1_, conv2_;
  std::shared_ptr<Linear> fc1_, fc2_;
  std::shared_ptr<Module> norm_;  ///< probes attach to it with a forward hook (Module::register_forward_hook)
};

}  // namespace nl
