#pragma once
// A small Vision Transformer (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words", Eq. 1-4) for
// CIFAR-sized images, the "Tiny-ViT on CIFAR-10" row of Ni et al. 2024's slides (LN 88.81% vs LN-G
// 89.26%; ../shared/docs/ni-pn-details.md §5.3; the slides give no architecture: the defaults below are
// the usual small CIFAR ViT, inferred):
//   patches:  Conv2d(C -> d, kernel = stride = patch) on x [B, C, H, W] -> N = (H/patch)(W/patch) tokens
//             (Eq. 1's E x_p^i as one strided convolution);
//   tokens:   z_0 = [x_class; patches] + E_pos, learned class token and positions [1, 1 + N, d]
//             (N(0, 0.02^2) as timm), dropout;
//   encoder:  `layers` pre-norm nl::TransformerEncoderLayer (Eq. 2-3: MSA and MLP blocks, GELU), no padding;
//   head:     the stack's final norm (Eq. 4: y = LN(z_L^0)) on the class token, Linear(d -> classes).
// Every norm slot (two per layer and the final one) is `norm` with `norm_options` from the factory
// (nn/norm/factory.h): layernorm, lng with {"groups": G}, rmsnorm, batchnorm, ...
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/conv2d.h"
#include "nn/linear.h"
#include "nn/transformer/layers.h"

namespace nl {

/// Configuration of VisionTransformer.
struct VitConfig {
  int64_t image_size = 32;   ///< H = W of the input
  int64_t in_channels = 3;   ///< 3, or 1 for grayscale
  int64_t patch = 4;         ///< patch side; must divide image_size
  int64_t d_model = 192;
  int64_t layers = 6;
  int64_t n_heads = 3;       ///< must divide d_model
  int64_t ffn_dim = 768;     ///< MLP width (4 d)
  int64_t classes = 10;
  double dropout = 0.0, attention_dropout = 0.0;
  std::string norm = "layernorm";  ///< any name of norm_names()
  nlohmann::json norm_options;     ///< passed to make_norm (e.g. {"groups": 12} for lng)
};

/// The network of the file comment. Children: patch_embed, layers.0 … layers.{L-1} (fairseq names
/// inside), layer_norm (final), head; parameters cls_token [1, 1, d], pos_embed [1, 1 + N, d].
class VisionTransformer : public Module {
 public:
  /// Throws std::invalid_argument naming the field and the fix: a patch not dividing image_size,
  /// n_heads not dividing d_model, a size < 1, a dropout outside [0, 1), an unknown norm or bad options.
  explicit VisionTransformer(const VitConfig& cfg);
  /// images [B, in_channels, image_size, image_size] -> logits [B, classes]. Throws
  /// std::invalid_argument naming the expected shape.
  Variable forward(const Variable& x) override;
  const VitConfig& config() const { return cfg_; }
  /// Number of tokens the encoder sees: 1 + (image_size / patch)^2.
  int64_t num_tokens() const { return 1 + (cfg_.image_size / cfg_.patch) * (cfg_.image_size / cfg_.patch); }

  std::shared_ptr<Conv2d> patch_embed;
  Variable cls_token, pos_embed;
  std::vector<std::shared_ptr<TransformerEncoderLayer>> layer_list;
  std::shared_ptr<Module> layer_norm;
  std::shared_ptr<Linear> head;

 private:
  VitConfig cfg_;
};

}  // namespace nl
