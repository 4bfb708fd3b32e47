#pragma once
// The CIFAR ResNet of He et al. 2016 (§4.2; ResNet-20 by default) with its ReLUs removed, as in Ni et al.
// 2024's "ResNet without ReLU" table (slides; ../shared/docs/ni-pn-details.md §5.2), so the only
// nonlinearity is the norm:
//   conv3x3(3 -> 16) -> norm,
//   3 stages of n = (depth - 2) / 6 basic blocks with 16, 32, 64 channels (stride 2 at the first block of
//   stages 2 and 3): y = norm(conv3x3(norm(conv3x3(x)))) + shortcut(x),
//   shortcut = identity, or (option A of He et al.) x subsampled by 2 and zero-padded to the new channels,
//   global average pool, Linear(64 -> classes).
// Norms on images [N, C, H, W]: make_image_norm of nn/norm/factory.h (batchnorm, instancenorm, layernorm,
// groupnorm, lng = LN-G-Position, none).
#include <memory>
#include <string>
#include <vector>

#include "nn/conv2d.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/norm/factory.h"

namespace nl {

/// Configuration of ResNetCifar.
struct ResNetCifarConfig {
  int64_t depth = 20;               ///< 6n + 2: 20, 32, 44, 56, 110
  std::string norm = "batchnorm";   ///< one of image_norm_names()
  int64_t groups = 4;               ///< G of groupnorm / lng (must divide 16)
  int64_t in_channels = 3;          ///< 3, or 1 for grayscale
  int64_t classes = 10;
};

/// The network of the file comment. Input [N, in_channels, H, W] -> logits [N, classes].
class ResNetCifar : public Module {
 public:
  /// Throws std::invalid_argument when depth is not 6n + 2 with n >= 1, and as make_image_norm.
  explicit ResNetCifar(const ResNetCifarConfig& cfg);
  /// Throws std::invalid_argument for an input that is not [N, in_channels, H, W].
  Variable forward(const Variable& x) override;

 private:
  struct Block {
    std::shared_ptr<Conv2d> conv1, conv2;
    std::shared_ptr<Module> norm1, norm2;
    int64_t in, out, stride;
  };
  ResNetCifarConfig cfg_;
  std::shared_ptr<Conv2d> stem_;
  std::shared_ptr<Module> stem_norm_;
  std::vector<Block> blocks_;
  std::shared_ptr<Linear> fc_;
};

}  // namespace nl
