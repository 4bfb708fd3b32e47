#pragma once
// The norm table: one descriptor per normalisation layer (name, aliases, flags, option keys, factory),
// and make_norm / make_image_norm, which build any of them by name so apps can swap norms from a flag or
// JSON config. Every list of norm names, every check on a norm's kind and every CLI choice derives from
// the table (norm_table.cpp); adding a norm is its own file plus one row there (docs/nn-norms.md).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/module.h"
#include "nn/norm/norm_options.h"

namespace nl {

/// What a member of the LayerNorm family of Xu et al. 2019 is: the flags of its kernel (LayerNormConfig)
/// and of the closed forms of its gradient (theory.h).
struct LayerNormVariant {
  bool identity = false;     ///< "none": y = x (the w/o-Norm baseline)
  bool detach_mean = false;  ///< no gradient through the mean (detach-mean, DetachNorm)
  bool detach_std = false;   ///< no gradient through the std (detach-variance, DetachNorm)
  bool adaptive = false;     ///< AdaNorm's detached factor C(1 - k y) (Eq. 9)
};

/// One normalisation layer of the table.
struct NormDescriptor {
  std::string name;                  ///< canonical name (CLI, configs, results)
  std::vector<std::string> aliases;  ///< other accepted spellings ("ln-g" for lng)
  std::string help;                  ///< one line: what it is and its source
  bool features = true;              ///< valid on features [..., d] (make_norm; every MLP/Transformer slot)
  bool images = false;               ///< valid on images [N, C, H, W] (make_image_norm)
  bool batch_statistics = false;     ///< pools statistics over the batch (a MaskedNorm: takes the padding mask)
  bool affine = false;               ///< has a gain/bias by default
  bool grouped_ln = false;           ///< normalises each of G feature groups like LayerNorm (G = "groups", or 1)
  std::optional<LayerNormVariant> family;  ///< set for the LayerNorm family of Xu et al. 2019
  std::vector<std::string> keys;     ///< the option keys make_norm accepts
  /// Builds the norm over the last dim d from options whose keys are valid (`keys`).
  std::function<std::shared_ptr<Module>(int64_t d, const NormOptions& o)> make;
  /// Builds the norm over the channels of images [N, C, H, W] with G groups where that applies; unset:
  /// `make` over the channels, with {"groups": G} when "groups" is one of `keys`.
  std::function<std::shared_ptr<Module>(int64_t channels, int64_t groups)> make_image;
};

/// Every norm, in the order of every name list derived from it (norm_table.cpp).
const std::vector<NormDescriptor>& norm_table();
/// The descriptor of a name or alias; throws std::invalid_argument for an unknown name, listing the
/// valid ones.
const NormDescriptor& norm_descriptor(const std::string& name_or_alias);
/// The LayerNorm-family flags of `name`; throws std::invalid_argument naming the family when `name` is
/// not one of layernorm_family_names().
const LayerNormVariant& layernorm_variant(const std::string& name_or_alias);

/// The LayerNorm family of Xu et al. 2019, in the order of its tables: none, layernorm,
/// layernorm-simple, detachnorm, detach-mean, detach-variance, adanorm (what the Xu et al. closed forms,
/// `normlab grad` and `reproduce adanorm` know).
const std::vector<std::string>& layernorm_family_names();

/// Every name valid on features ([N, d], [B, T, d]: every norm slot of the MLPs and Transformers):
/// layernorm_family_names(), then batchnorm, powernorm-v, powernorm (Shen et al. 2020), groupnorm, lng
/// (Ni et al. 2024), rmsnorm (Zhang & Sennrich 2019). make_norm and norm_option_keys also accept the
/// aliases of the table ("pn-v" = powernorm-v, "ln-g" = lng).
const std::vector<std::string>& norm_names();

/// The names make_image_norm accepts (norms over the channels of images [N, C, H, W]): none, layernorm,
/// batchnorm, groupnorm, lng, instancenorm.
const std::vector<std::string>& image_norm_names();

/// Every name of the table: norm_names(), then the image-only instancenorm. All name lists above are
/// filtered from norm_table(), in its order.
const std::vector<std::string>& all_norm_names();

/// `name` with an alias of the table resolved ("pn-v" -> "powernorm-v", "ln-g" -> "lng"); other names,
/// unknown ones included, unchanged.
std::string canonical_norm_name(const std::string& name);

/// The option keys make_norm accepts for `name` (so callers can pass only the settings a norm uses,
/// e.g. AdaNorm's "C", GroupNorm's "groups"). Throws std::invalid_argument for an unknown name
/// (listing all_norm_names()).
const std::vector<std::string>& norm_option_keys(const std::string& name);

/// True when `key` is one of norm_option_keys(name); throws as norm_option_keys.
bool norm_accepts_option(const std::string& name, const std::string& key);

/// True when norm `name` pools statistics over the batch (its descriptor's batch_statistics: batchnorm,
/// powernorm-v, powernorm, the MaskedNorms of masked_norm.h). Throws std::invalid_argument for an unknown
/// name.
bool norm_uses_batch_statistics(const std::string& name);

/// Builds norm `name` over the last dim d (input [..., d]). `opts` (a JSON object or null):
///   "impl": "fused" (default) | "composite";  "eps": number (1e-5);
///   "unbiased": bool (false: 1/H as paper/torch; true: 1/(H-1) as the AdaNorm code);
///   "eps_inside": bool (true: sqrt(var+eps) as torch; false: std+eps as the AdaNorm code);
///   "dtype": "float32" (default) | "float64" (dtype of the gain/bias parameters);
///   layernorm family only: "affine": bool (overrides the variant's default);
///   adanorm only: "C": number (1.0), "k": number (0.1).
/// "none" accepts the common keys and ignores them.
/// The other norms take "eps" (1e-5, inside the sqrt), "dtype" and "affine" (true: per-feature gain
/// "weight" and bias "bias"), and:
///   batchnorm (batch_norm.h):    "momentum": number (0.1; weight of the new batch, torch convention;
///                                0.05 for sync), "reading": "paper" (default), "sync" (the shipped
///                                MaskSyncBatchNorm: layer scaling, pads filled with the mean) or "mask"
///                                (MaskBatchNorm: eps as a clamp, batch statistics in eval); "released":
///                                bool (true = "sync");
///   powernorm-v (power_norm.h):  "alpha_fwd": number (0.9; running_phi <- a running_phi + (1-a) psi_B^2),
///                                "layer_scale": bool (false), "layer_scale_groups": integer (1);
///   powernorm (power_norm.h):    "alpha_fwd" (0.9), "alpha_bwd" (0.9), "warmup_iters": integer (1000),
///                                "warmup_double_update": bool (true, as the code), "bwd_scale": "batch"
///                                (code, default) | "running" (paper Eq. 12), "layer_scale": bool (true,
///                                as the code), "layer_scale_groups": integer (1; the code uses the number
///                                of attention heads);
///   groupnorm, lng (group_norm.h): "groups": integer (1), which must divide d;
///   instancenorm (group_norm.h): no own keys; images [N, d, H, W] only (GroupNorm with G = d);
///   rmsnorm (rms_norm.h):        "bias": bool (false; needs affine).
/// batchnorm, powernorm-v and powernorm are MaskedNorms (masked_norm.h): pass the padding mask with
/// nl::norm_forward(norm, x, pad_mask). Throws std::invalid_argument on an unknown name
/// (listing the valid names), on a key not valid for that name (listing the valid keys), or on a value
/// of the wrong type.
std::shared_ptr<Module> make_norm(const std::string& name, int64_t d, const nlohmann::json& opts = {});

/// A norm over the C channels of images [N, C, H, W] by name (one of image_norm_names()): batchnorm (per
/// channel over N, H, W), instancenorm (per image and channel over H, W), layernorm (per image over
/// C, H, W = GroupNorm with 1 group), groupnorm (G groups of channels over H, W), lng (LN-G-Position:
/// G groups of channels at each pixel), none (identity). `groups` is G of groupnorm and lng (ignored by
/// the others). Throws std::invalid_argument for another name (listing image_norm_names()) or G not
/// dividing C (naming both).
std::shared_ptr<Module> make_image_norm(const std::string& name, int64_t channels, int64_t groups);

}  // namespace nl
