#include "engine/norm_settings.h"

#include <algorithm>

#include "nn/norm/factory.h"

namespace nlapp {
using json = nlohmann::json;

std::vector<OptionSpec> norm_settings(const std::string& default_norm, double default_C) {
  OptionSpec norm;
  norm.key = "norm";
  norm.kind = OptKind::String;
  norm.def = default_norm;
  norm.choices = nl::norm_names();
  norm.help = "Norm in every norm slot (Xu et al. 2019 variants)";
  OptionSpec impl;
  impl.key = "impl";
  impl.kind = OptKind::String;
  impl.def = "fused";
  impl.choices = {"fused", "composite"};
  impl.help = "LayerNorm-family implementation: fused kernel or composite of primitive ops + detach nodes";
  OptionSpec C;
  C.key = "C";
  C.kind = OptKind::Float;
  C.def = default_C;
  C.lo = 0;
  C.lo_open = true;
  C.hi = 1e6;
  C.help = "AdaNorm's scale C (Xu et al. 2019 Eq. 9); used by --norm adanorm only";
  return {norm, impl, C};
}

json norm_options(const json& settings) {
  const std::string name = settings.at("norm").get<std::string>();
  const auto& keys = nl::norm_option_keys(name);
  json o = json::object();
  for (const char* k : {"impl", "C"})
    if (std::find(keys.begin(), keys.end(), k) != keys.end() && settings.contains(k)) o[k] = settings[k];
  return o;
}

}  // namespace nlapp
