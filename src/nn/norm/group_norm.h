#pragma once
// Grouped per-sample norms: GroupNorm (Wu & He 2018, PyTorch semantics) and LN-G (Ni et al. 2024,
// "group based LN"). Both split the D features into G contiguous groups of n = D/G and normalise each
// group with its own statistics (biased variance, eps inside the sqrt):
//
//   y = (x - mu_g) / sqrt(sigma_g^2 + eps),   mu_g, sigma_g^2 over the group,   z = w ⊙ y + b  (per feature).
//
// They differ only in what a group pools over on images [N, C, H, W]:
//   instancenorm: GroupNorm with one channel per group (G = C): each (image, channel) over H x W
//              (Ulyanov et al. 2016; torch.nn.GroupNorm(C, C), affine per channel); images only;
//   groupnorm: the group's C/G channels over all H x W pixels of one image (torch.nn.GroupNorm, Wu & He
//              Eq. 1 with S_i = the group's (C/G, H, W) block);
//   lng:       the group's C/G channels at each pixel on its own ("LN-G-Position",
//              ni-pn-details.md §4; Musicath/Parallel-LN pln.py permutes NCHW to NHWC; normlab normalises
//              in the NCHW layout, layer_norm_channels_fused).
// On tokens ([N, D], [B, T, D]) the two are the same function: LN applied per group of features (LN-G
// with G = 1 is LayerNorm; GroupNorm with G = 1 on an image is LayerNorm over (C, H, W)).
// Gradients are exact (autograd through the fused LayerNorm kernel of autograd/functions/layer_norm.cpp,
// whose closed-form backward is Xu et al. 2019 appendix B).
#include "nn/norm/masked_norm.h"
#include "nn/norm/norm_options.h"

namespace nl {

/// Normalises each of the G contiguous groups of the last dim of `rows` [R, D] on its own:
/// centred (LayerNorm per group, biased variance) or not (RMS per group: x / sqrt(mean(x^2) + eps)).
/// No gain/bias. Throws std::invalid_argument if G < 1 or G does not divide D (naming both).
Variable grouped_normalize(const Variable& rows, int64_t groups, bool center, double eps);

/// Throws std::invalid_argument naming `who` unless 1 <= groups and groups divides d.
void check_groups(int64_t d, int64_t groups, const std::string& who);

/// Options of GroupNorm and LN-G.
struct GroupNormConfig {
  int64_t groups = 1;   ///< G, the number of groups (must divide the feature dim)
  double eps = 1e-5;    ///< inside the sqrt
  bool affine = true;   ///< per-feature gain "weight" (init 1) and "bias" (init 0)
};

/// What GroupNorm and LN-G share: the checked config, the affine parameters and extra_repr; they
/// differ only in forward. Throws std::invalid_argument on d < 1, eps < 0 or groups not dividing d.
class GroupedNorm : public Module {
 public:
  std::string extra_repr() const override;
  Variable weight, bias;  ///< [d]; undefined without affine
  int64_t dim;

 protected:
  GroupedNorm(const std::string& type_name, int64_t d, GroupNormConfig cfg, DType dtype);
  /// LN per group of features of each row, then the affine; back to the input's layout. Throws
  /// std::invalid_argument when groups = d > 1 (one value per group: the output would be 0 for every input).
  Variable normalize_rows(const Rows& r) const;
  /// Throws std::invalid_argument (naming `input`'s shape) when groups = d > 1: one value per group.
  void check_groups_hold_several(const Shape& input) const;
  /// Images x [N, C, H, W]: each group's C/G channels pooled over all H x W pixels, then the affine.
  Variable normalize_image_groups(const Variable& x, const Shape& s) const;
  GroupNormConfig cfg_;
};

/// GroupNorm over d channels (see the file comment): [N, d], [B, T, d] or [N, d, H, W] -> same shape.
/// Throws as GroupedNorm, and on an input of another layout.
class GroupNorm : public GroupedNorm {
 public:
  GroupNorm(int64_t d, GroupNormConfig cfg = {}, DType dtype = DType::Float32)
      : GroupedNorm("GroupNorm", d, cfg, dtype) {}
  Variable forward(const Variable& x) override;
};

/// LN-G over d features (see the file comment): [N, d], [B, T, d] or [N, d, H, W] (per pixel) -> same
/// shape. Same throws as GroupNorm.
class LayerNormG : public GroupedNorm {
 public:
  LayerNormG(int64_t d, GroupNormConfig cfg = {}, DType dtype = DType::Float32)
      : GroupedNorm("LayerNormG", d, cfg, dtype) {}
  Variable forward(const Variable& x) override;
};

/// InstanceNorm over d channels of images [N, d, H, W] (see the file comment): GroupNorm with G = d.
/// Throws as GroupedNorm, and std::invalid_argument on any input that is not an image (on features every
/// value would be normalised alone: the output would be 0).
class InstanceNorm : public GroupedNorm {
 public:
  /// `cfg.groups` is ignored (always d).
  InstanceNorm(int64_t d, GroupNormConfig cfg = {}, DType dtype = DType::Float32)
      : GroupedNorm("InstanceNorm", d, GroupNormConfig{d, cfg.eps, cfg.affine}, dtype) {}
  Variable forward(const Variable& x) override;
};

/// Registers "weight" (ones) and "bias" (zeros) of size d on `m` when `affine`; used by every norm
/// of this directory with a per-feature gain/bias.
void register_affine(Module& m, int64_t d, bool affine, DType dtype, Variable& weight, Variable& bias);
/// z = w ⊙ y + b on rows [R, D] (w, b [D]); y itself when w is undefined; b may be undefined.
Variable apply_affine(const Variable& y, const Variable& weight, const Variable& bias);

/// Norm-table factories of "groupnorm", "lng" and "instancenorm": o's "eps", "affine" and (not
/// instancenorm) "groups" (1).
std::shared_ptr<Module> make_group_norm(int64_t d, const NormOptions& o);
std::shared_ptr<Module> make_layer_norm_g(int64_t d, const NormOptions& o);
std::shared_ptr<Module> make_instance_norm(int64_t d, const NormOptions& o);

}  // namespace nl
