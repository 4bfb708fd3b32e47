#pragma once
// The norm settings every task with norm slots shares (--norm, --impl, --C, --groups), and the one place that
// turns them into make_norm options: each norm gets only the options it accepts (AdaNorm's C goes to
// AdaNorm alone), so no command special-cases a norm.
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/options.h"

namespace nlapp {

/// Specs of "norm" (default `default_norm`), "impl" (fused | composite), "C" (AdaNorm's scale,
/// Xu et al. 2019 Eq. 9; `default_C` is the paper's value for the task) and "groups" (G of lng and
/// groupnorm, default 1).
std::vector<OptionSpec> norm_settings(const std::string& default_norm, double default_C);

/// True when the PyTorch twins of `normlab bench` (bench/pytorch_mnist.py, bench/pytorch_transformer.py)
/// build norm `name`: their --norm choices none, layernorm, layernorm-simple.
bool pytorch_twin_has_norm(const std::string& name);

/// make_norm options for settings["norm"]: {"impl": ...} plus "C" and "groups" when the norm takes them
/// and the settings have them, and "reading" = settings["bn_reading"] for batchnorm when present.
nlohmann::json norm_options(const nlohmann::json& settings);

/// make_norm options for norm `name` (not necessarily settings["norm"], e.g. a Transformer's
/// --decoder-norm) from the settings: "impl", "C" and "groups" when the norm takes them. Throws
/// std::invalid_argument for an unknown name.
nlohmann::json norm_options(const nlohmann::json& settings, const std::string& name);

}  // namespace nlapp
