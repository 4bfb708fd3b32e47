#pragma once
// Shared by the `normlab grad` commands: which norms to run, the estimator by name, and building a
// float64 norm layer from them.
#include <memory>
#include <string>
#include <vector>

#include "nn/module.h"
#include "nn/norm/theory.h"

namespace nlapp {

/// "all" -> every name of nl::layernorm_family_names(); otherwise a comma-separated list of names, in the given
/// order. Throws std::invalid_argument on an empty list or an unknown name (listing the valid ones).
std::vector<std::string> parse_norm_list(const std::string& spec);

/// "paper" -> biased sigma, eps 0 (Xu et al. 2019, appendix B); "code" -> unbiased std + eps 1e-5 on
/// the std (lancopku/AdaNorm, seed-code §1.1). Throws std::invalid_argument otherwise.
nl::theory::Estimator parse_estimator(const std::string& name);

/// Checks AdaNorm's C with `normlab train`'s range for --C (norm_settings: a finite number greater than 0,
/// at most 1e6) and k as a finite number. Throws std::invalid_argument naming the flag ("--C must be ...
/// (got 'nan')").
void check_adanorm_options(double C, double k);

/// Builds norm `name` over the last dim H in float64 with the estimator, implementation
/// ("fused" | "composite") and, for AdaNorm, C and k. Throws std::invalid_argument on an unknown name,
/// H < 2 or a bad C or k (check_adanorm_options, whatever the norm, as train checks --C).
std::shared_ptr<nl::Module> make_grad_norm(const std::string& name, int64_t H, const nl::theory::Estimator& est,
                                           const std::string& impl, double C, double k);

}  // namespace nlapp
