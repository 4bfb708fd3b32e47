#pragma once
// The LN-Net of Ni et al. 2024 ("On the Nonlinearity of Layer Normalization", ICML; notes:
// ../shared/docs/ni-pn-details.md §4-5): a multilayer perceptron with NO activation function,
//   flatten -> [Linear(in_l, width) -> norm] × depth -> Linear(width, classes),
// so every nonlinearity comes from the norm. The paper's baselines are the same class:
//   norm "none" = a linear neural network of the same shape (a product of matrices: linear);
//   depth 0     = a linear classifier (one Linear on the flattened input).
// Norm "lng" with {"groups": G} is LN-G (LayerNorm per contiguous group of width/G features).
// Input [B, ...] (flattened from dim 1, e.g. images [B, C, H, W]); output logits [B, classes].
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/linear.h"
#include "nn/module.h"

namespace nl {

/// Configuration of LnNet.
struct LnNetConfig {
  int64_t in = 784;        ///< flattened input size (MNIST 784; CIFAR-10 3072, grayscale 1024)
  int64_t width = 256;     ///< features of every hidden layer
  int64_t depth = 4;       ///< hidden Linear -> norm blocks; 0 = linear classifier
  int64_t classes = 10;
  std::string norm = "layernorm";  ///< any name of norm_names()
  nlohmann::json norm_opts;        ///< passed to make_norm (e.g. {"groups": 8} for lng)
};

/// The network of the file comment; parameters fc0, norm0, …, fc{depth-1}, norm{depth-1}, out.
class LnNet : public Module {
 public:
  /// Throws std::invalid_argument for in, width or classes < 1, depth < 0, an unknown norm or bad
  /// norm options (e.g. groups not dividing width: the message names both).
  explicit LnNet(const LnNetConfig& cfg);
  /// x [B, ...] with in features after flattening -> logits [B, classes]; throws std::invalid_argument
  /// naming both sizes when the flattened input does not have `in` features.
  Variable forward(const Variable& x) override;
  const LnNetConfig& config() const { return cfg_; }
  /// The norm layers in order (for probes, e.g. the Hessian measure at each norm's input).
  const std::vector<std::shared_ptr<Module>>& norms() const { return norms_; }

 private:
  LnNetConfig cfg_;
  std::vector<std::shared_ptr<Linear>> fcs_;
  std::vector<std::shared_ptr<Module>> norms_;
  std::shared_ptr<Linear> out_;
};

}  // namespace nl
