#pragma once
// make_norm: build any normalisation layer by name, so apps can swap norms from a flag or JSON config.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/module.h"

namespace nl {

/// Valid names, in the order of Xu et al. 2019's tables: none, layernorm, layernorm-simple,
/// detachnorm, detach-mean, detach-variance, adanorm.
const std::vector<std::string>& norm_names();

/// The option keys make_norm accepts for `name` (so callers can pass only the settings a norm uses,
/// e.g. AdaNorm's "C"). Throws std::invalid_argument for an unknown name.
const std::vector<std::string>& norm_option_keys(const std::string& name);

/// Builds norm `name` over the last dim d (input [..., d]). `opts` (a JSON object or null):
///   "impl": "fused" (default) | "composite";  "eps": number (1e-5);
///   "unbiased": bool (false: 1/H as paper/torch; true: 1/(H-1) as the AdaNorm code);
///   "eps_inside": bool (true: sqrt(var+eps) as torch; false: std+eps as the AdaNorm code);
///   "dtype": "float32" (default) | "float64" (dtype of the gain/bias parameters);
///   layernorm family only: "affine": bool (overrides the variant's default);
///   adanorm only: "C": number (1.0), "k": number (0.1).
/// "none" accepts the common keys and ignores them. Throws std::invalid_argument on an unknown name
/// (listing the valid names), on a key not valid for that name (listing the valid keys), or on a value
/// of the wrong type.
std::shared_ptr<Module> make_norm(const std::string& name, int64_t d, const nlohmann::json& opts = {});

}  // namespace nl
