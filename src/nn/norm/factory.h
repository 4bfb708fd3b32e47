#pragma once
// make_norm: build any normalisation layer by name, so apps can swap norms from a flag or JSON config.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/module.h"

namespace nl {

/// The LayerNorm family of Xu et al. 2019, in the order of its tables: none, layernorm,
/// layernorm-simple, detachnorm, detach-mean, detach-variance, adanorm (what the Xu et al. closed forms,
/// `normlab grad` and `reproduce adanorm` know).
const std::vector<std::string>& layernorm_family_names();

/// Every name valid on features ([N, d], [B, T, d]: every norm slot of the MLPs and Transformers):
/// layernorm_family_names(), then batchnorm, powernorm-v, powernorm (Shen et al. 2020), groupnorm, lng
/// (Ni et al. 2024), rmsnorm (Zhang & Sennrich 2019). make_norm and norm_option_keys also accept the
/// aliases "pn-v" (= powernorm-v) and "ln-g" (= lng).
const std::vector<std::string>& norm_names();

/// The names make_image_norm accepts (norms over the channels of images [N, C, H, W]): none, layernorm,
/// batchnorm, groupnorm, lng, instancenorm.
const std::vector<std::string>& image_norm_names();

/// Every name of the registry: norm_names(), then the image-only instancenorm. All name lists above
/// are filtered from this one registry (factory.cpp), in its order.
const std::vector<std::string>& all_norm_names();

/// `name` with an alias resolved ("pn-v" -> "powernorm-v", "ln-g" -> "lng"); other names unchanged.
std::string canonical_norm_name(const std::string& name);

/// The option keys make_norm accepts for `name` (so callers can pass only the settings a norm uses,
/// e.g. AdaNorm's "C", GroupNorm's "groups"). Throws std::invalid_argument for an unknown name
/// (listing all_norm_names()).
const std::vector<std::string>& norm_option_keys(const std::string& name);

/// True when norm `name` pools statistics over the batch (batchnorm, powernorm-v, powernorm: the
/// MaskedNorms of masked_norm.h). Throws std::invalid_argument for an unknown name.
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
///                                0.05 when released), "released": bool (false; true = the shipped
///                                MaskSyncBatchNorm: layer scaling, pads filled with the mean);
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
