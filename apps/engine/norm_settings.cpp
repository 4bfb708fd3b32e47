#include "engine/norm_settings.h"

#include <algorithm>

#include "nn/norm/factory.h"
#include "nn/norm/layer_norm.h"

namespace nlapp {
using json = nlohmann::json;

std::vector<OptionSpec> norm_settings(const std::string& default_norm, double default_C) {
  return {choice_option("norm", default_norm, nl::norm_names(), "Norm in every norm slot (docs/nn-norms.md lists them)"),
          choice_option("impl", nl::norm_impl_name(nl::NormImpl::Fused), nl::norm_impl_names(),
                        "LayerNorm-family implementation: fused kernel or composite of primitive ops + detach nodes"),
          option("C", OptKind::Float, default_C, "AdaNorm's scale C (Xu et al. 2019 Eq. 9); used by --norm adanorm only",
                 0, 1e6, /*lo_open=*/true),
          option("groups", OptKind::Int, 1,
                 "Groups G of --norm lng / groupnorm: contiguous feature groups, each normalised alone (must divide "
                 "the width of every norm slot; G = 1 is layernorm)",
                 1, 65536)};
}

bool pytorch_twin_has_norm(const std::string& name) {
  static const std::vector<std::string> twin{"none", "layernorm", "layernorm-simple"};  // the scripts' --norm choices
  return std::find(twin.begin(), twin.end(), name) != twin.end();
}

json norm_options(const json& settings) { return norm_options(settings, settings.at("norm").get<std::string>()); }

json norm_options(const json& settings, const std::string& name) {
  json o = json::object();
  for (const char* k : {"impl", "C", "groups"})
    if (nl::norm_accepts_option(name, k) && settings.contains(k)) o[k] = settings[k];
  // --bn-reading (Transformer tasks) selects what batchnorm computes (paper, or a released class).
  if (nl::norm_accepts_option(name, "reading") && settings.contains("bn_reading")) o["reading"] = settings["bn_reading"];
  return o;
}

}  // namespace nlapp
