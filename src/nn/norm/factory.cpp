#include "nn/norm/factory.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <type_traits>

#include "nn/activation.h"
#include "nn/norm/adanorm.h"
#include "nn/norm/batch_norm.h"
#include "nn/norm/group_norm.h"
#include "nn/norm/layer_norm.h"
#include "nn/norm/masked_norm.h"
#include "nn/norm/no_norm.h"
#include "nn/norm/power_norm.h"
#include "nn/norm/rms_norm.h"

namespace nl {

namespace {
// The one registry of norm names, in the order of every list derived from it: what each accepts
// (features [..., d] through make_norm, images [N, C, H, W] through make_image_norm) and its option
// keys. Every name list of the project comes from here.
struct NormEntry {
  std::string name;
  bool family;    // the LayerNorm family of Xu et al. 2019
  bool features;  // valid on [N, d] / [B, T, d]
  bool images;    // valid in make_image_norm
  std::vector<std::string> keys;
};

const std::vector<NormEntry>& registry() {
  static const std::vector<NormEntry> r = [] {
    const std::vector<std::string> common{"impl", "eps", "unbiased", "eps_inside", "dtype"};
    auto with = [&](std::vector<std::string> extra) {
      auto v = common;
      v.insert(v.end(), extra.begin(), extra.end());
      return v;
    };
    const std::vector<std::string> ln = with({"affine"});
    return std::vector<NormEntry>{
        {"none", true, true, true, common},
        {"layernorm", true, true, true, ln},
        {"layernorm-simple", true, true, false, ln},
        {"detachnorm", true, true, false, ln},
        {"detach-mean", true, true, false, ln},
        {"detach-variance", true, true, false, ln},
        {"adanorm", true, true, false, with({"C", "k"})},
        {"batchnorm", false, true, true, {"eps", "dtype", "affine", "momentum", "released"}},
        {"powernorm-v", false, true, false, {"eps", "dtype", "affine", "alpha_fwd", "layer_scale", "layer_scale_groups"}},
        {"powernorm", false, true, false,
         {"eps", "dtype", "affine", "alpha_fwd", "alpha_bwd", "warmup_iters", "warmup_double_update", "bwd_scale",
          "layer_scale", "layer_scale_groups"}},
        {"groupnorm", false, true, true, {"eps", "dtype", "affine", "groups"}},
        {"lng", false, true, true, {"eps", "dtype", "affine", "groups"}},
        {"rmsnorm", false, true, false, {"eps", "dtype", "affine", "bias"}},
        {"instancenorm", false, false, true, {"eps", "dtype", "affine"}},
    };
  }();
  return r;
}

std::vector<std::string> names_where(bool (*keep)(const NormEntry&)) {
  std::vector<std::string> v;
  for (const auto& e : registry())
    if (keep(e)) v.push_back(e.name);
  return v;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

// The registry entry of a canonical name; throws the unknown-name error (listing every name).
const NormEntry& entry(const std::string& name, const std::string& who) {
  for (const auto& e : registry())
    if (e.name == name) return e;
  throw std::invalid_argument(who + "unknown norm '" + name + "' (valid: " + join(all_norm_names()) + ")");
}

template <typename T>
T get_opt(const nlohmann::json& opts, const std::string& name, const std::string& key, T fallback) {
  if (!opts.contains(key)) return fallback;
  const auto& v = opts.at(key);
  bool ok = false;
  if constexpr (std::is_same_v<T, bool>) ok = v.is_boolean();
  else if constexpr (std::is_same_v<T, double>) ok = v.is_number();
  else if constexpr (std::is_same_v<T, int64_t>) ok = v.is_number_integer();
  else ok = v.is_string();
  if (!ok)
    throw std::invalid_argument("make_norm(" + name + "): option '" + key + "' has the wrong type (" +
                                std::string(v.type_name()) + "): " + v.dump());
  return v.get<T>();
}
}  // namespace

const std::vector<std::string>& layernorm_family_names() {
  static const auto names = names_where([](const NormEntry& e) { return e.family; });
  return names;
}

const std::vector<std::string>& norm_names() {
  static const auto names = names_where([](const NormEntry& e) { return e.features; });
  return names;
}

const std::vector<std::string>& image_norm_names() {
  static const auto names = names_where([](const NormEntry& e) { return e.images; });
  return names;
}

const std::vector<std::string>& all_norm_names() {
  static const auto names = names_where([](const NormEntry&) { return true; });
  return names;
}

std::string canonical_norm_name(const std::string& name) {
  if (name == "pn-v") return "powernorm-v";
  if (name == "ln-g") return "lng";
  return name;
}

const std::vector<std::string>& norm_option_keys(const std::string& name) {
  return entry(canonical_norm_name(name), "").keys;
}

namespace {
DType parse_dtype(const nlohmann::json& o, const std::string& name) {
  const std::string dt = get_opt<std::string>(o, name, "dtype", "float32");
  if (dt != "float32" && dt != "float64")
    throw std::invalid_argument("make_norm(" + name + "): dtype must be 'float32' or 'float64', got '" + dt + "'");
  return dt == "float64" ? DType::Float64 : DType::Float32;
}

// The norms outside the LayerNorm family (batch statistics, groups, RMS); o holds only valid keys.
std::shared_ptr<Module> make_other_norm(const std::string& name, int64_t d, const nlohmann::json& o) {
  const DType dtype = parse_dtype(o, name);
  const double eps = get_opt<double>(o, name, "eps", 1e-5);
  const bool affine = get_opt<bool>(o, name, "affine", true);
  if (name == "batchnorm") {
    BatchNormConfig c;
    c.eps = eps;
    c.affine = affine;
    c.released = get_opt<bool>(o, name, "released", false);
    c.momentum = get_opt<double>(o, name, "momentum", c.released ? 0.05 : 0.1);
    return std::make_shared<BatchNorm>(d, c, dtype);
  }
  if (name == "powernorm-v") {
    PowerNormVConfig c;
    c.eps = eps;
    c.affine = affine;
    c.alpha_fwd = get_opt<double>(o, name, "alpha_fwd", c.alpha_fwd);
    c.layer_scale = get_opt<bool>(o, name, "layer_scale", c.layer_scale);
    c.layer_scale_groups = get_opt<int64_t>(o, name, "layer_scale_groups", c.layer_scale_groups);
    return std::make_shared<PowerNormV>(d, c, dtype);
  }
  if (name == "powernorm") {
    PowerNormConfig c;
    c.eps = eps;
    c.affine = affine;
    c.alpha_fwd = get_opt<double>(o, name, "alpha_fwd", c.alpha_fwd);
    c.alpha_bwd = get_opt<double>(o, name, "alpha_bwd", c.alpha_bwd);
    c.warmup_iters = get_opt<int64_t>(o, name, "warmup_iters", c.warmup_iters);
    c.warmup_double_update = get_opt<bool>(o, name, "warmup_double_update", c.warmup_double_update);
    const std::string bs = get_opt<std::string>(o, name, "bwd_scale", "batch");
    if (bs != "batch" && bs != "running")
      throw std::invalid_argument("make_norm(powernorm): bwd_scale must be 'batch' (released code: dL/dx / psi_B) or "
                                  "'running' (paper Eq. 12: dL/dx / psi_{t-1}), got '" + bs + "'");
    c.bwd_scale_batch = bs == "batch";
    c.layer_scale = get_opt<bool>(o, name, "layer_scale", c.layer_scale);
    c.layer_scale_groups = get_opt<int64_t>(o, name, "layer_scale_groups", c.layer_scale_groups);
    return std::make_shared<PowerNorm>(d, c, dtype);
  }
  if (name == "groupnorm" || name == "lng") {
    GroupNormConfig c;
    c.eps = eps;
    c.affine = affine;
    c.groups = get_opt<int64_t>(o, name, "groups", 1);
    if (name == "groupnorm") return std::make_shared<GroupNorm>(d, c, dtype);
    return std::make_shared<LayerNormG>(d, c, dtype);
  }
  if (name == "instancenorm") return std::make_shared<InstanceNorm>(d, GroupNormConfig{d, eps, affine}, dtype);
  RMSNormConfig c;  // rmsnorm
  c.eps = eps;
  c.affine = affine;
  c.bias = get_opt<bool>(o, name, "bias", false);
  return std::make_shared<RMSNorm>(d, c, dtype);
}
}  // namespace

bool norm_uses_batch_statistics(const std::string& name) {
  return uses_batch_statistics(*make_norm(name, 2));  // d = 2 suits every norm's default options
}

std::shared_ptr<Module> make_norm(const std::string& name_in, int64_t d, const nlohmann::json& opts) {
  const std::string name = canonical_norm_name(name_in);
  entry(name, "make_norm: ");
  if (!opts.is_null() && !opts.is_object())
    throw std::invalid_argument("make_norm(" + name + "): options must be a JSON object, got " + opts.dump());

  const std::vector<std::string>& valid = norm_option_keys(name);
  if (opts.is_object())
    for (auto it = opts.begin(); it != opts.end(); ++it)
      if (std::find(valid.begin(), valid.end(), it.key()) == valid.end())
        throw std::invalid_argument("make_norm(" + name + "): unknown option '" + it.key() + "' (valid: " + join(valid) +
                                    ")");

  const nlohmann::json o = opts.is_object() ? opts : nlohmann::json::object();
  const auto& family = layernorm_family_names();
  if (std::find(family.begin(), family.end(), name) == family.end()) return make_other_norm(name, d, o);

  LayerNormConfig cfg = name == "none" || name == "adanorm" ? LayerNormConfig::variant("layernorm-simple")
                                                            : LayerNormConfig::variant(name);
  cfg.impl = parse_norm_impl(get_opt<std::string>(o, name, "impl", "fused"));
  cfg.eps = get_opt<double>(o, name, "eps", cfg.eps);
  cfg.unbiased = get_opt<bool>(o, name, "unbiased", cfg.unbiased);
  cfg.eps_inside = get_opt<bool>(o, name, "eps_inside", cfg.eps_inside);
  const DType dtype = parse_dtype(o, name);

  if (name == "none") return std::make_shared<NoNorm>(d);
  if (name == "adanorm") {
    AdaNormConfig ac;
    ac.C = get_opt<double>(o, name, "C", 1.0);
    ac.k = get_opt<double>(o, name, "k", 0.1);
    ac.norm = cfg;
    return std::make_shared<AdaNorm>(d, ac);
  }
  cfg.affine = get_opt<bool>(o, name, "affine", cfg.affine);
  return std::make_shared<LayerNorm>(d, cfg, dtype);
}

std::shared_ptr<Module> make_image_norm(const std::string& name_in, int64_t c, int64_t groups) {
  const std::string name = canonical_norm_name(name_in);
  const auto& names = image_norm_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw std::invalid_argument("image norm '" + name + "' is unknown (valid on images [N, C, H, W]: " + join(names) +
                                ")");
  if (name == "none") return std::make_shared<Identity>();  // NoNorm checks a last dim of C: not images
  if (name == "layernorm") return make_norm("groupnorm", c, {{"groups", 1}});  // all of (C, H, W)
  if (name == "groupnorm" || name == "lng") return make_norm(name, c, {{"groups", groups}});
  return make_norm(name, c);  // batchnorm, instancenorm
}

}  // namespace nl
