#include "nn/norm/factory.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "nn/norm/adanorm.h"
#include "nn/norm/layer_norm.h"
#include "nn/norm/no_norm.h"

namespace nl {

const std::vector<std::string>& norm_names() {
  static const std::vector<std::string> names{"none",        "layernorm",       "layernorm-simple", "detachnorm",
                                              "detach-mean", "detach-variance", "adanorm"};
  return names;
}

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

template <typename T>
T get_opt(const nlohmann::json& opts, const std::string& name, const std::string& key, T fallback) {
  if (!opts.contains(key)) return fallback;
  const auto& v = opts.at(key);
  bool ok = false;
  if constexpr (std::is_same_v<T, bool>) ok = v.is_boolean();
  else if constexpr (std::is_same_v<T, double>) ok = v.is_number();
  else ok = v.is_string();
  if (!ok)
    throw std::invalid_argument("make_norm(" + name + "): option '" + key + "' has the wrong type (" +
                                std::string(v.type_name()) + "): " + v.dump());
  return v.get<T>();
}
}  // namespace

const std::vector<std::string>& norm_option_keys(const std::string& name) {
  static const std::vector<std::string> common{"impl", "eps", "unbiased", "eps_inside", "dtype"};
  static const std::vector<std::string> ada = [] {
    auto v = common;
    v.insert(v.end(), {"C", "k"});
    return v;
  }();
  static const std::vector<std::string> ln = [] {
    auto v = common;
    v.push_back("affine");
    return v;
  }();
  const auto& names = norm_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw std::invalid_argument("unknown norm '" + name + "' (valid: " + join(names) + ")");
  return name == "adanorm" ? ada : name == "none" ? common : ln;
}

std::shared_ptr<Module> make_norm(const std::string& name, int64_t d, const nlohmann::json& opts) {
  const auto& names = norm_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw std::invalid_argument("make_norm: unknown norm '" + name + "' (valid: " + join(names) + ")");
  if (!opts.is_null() && !opts.is_object())
    throw std::invalid_argument("make_norm(" + name + "): options must be a JSON object, got " + opts.dump());

  const std::vector<std::string>& valid = norm_option_keys(name);
  if (opts.is_object())
    for (auto it = opts.begin(); it != opts.end(); ++it)
      if (std::find(valid.begin(), valid.end(), it.key()) == valid.end())
        throw std::invalid_argument("make_norm(" + name + "): unknown option '" + it.key() + "' (valid: " + join(valid) +
                                    ")");

  const nlohmann::json o = opts.is_object() ? opts : nlohmann::json::object();
  LayerNormConfig cfg = name == "none" || name == "adanorm" ? LayerNormConfig::variant("layernorm-simple")
                                                            : LayerNormConfig::variant(name);
  cfg.impl = parse_norm_impl(get_opt<std::string>(o, name, "impl", "fused"));
  cfg.eps = get_opt<double>(o, name, "eps", cfg.eps);
  cfg.unbiased = get_opt<bool>(o, name, "unbiased", cfg.unbiased);
  cfg.eps_inside = get_opt<bool>(o, name, "eps_inside", cfg.eps_inside);
  const std::string dt = get_opt<std::string>(o, name, "dtype", "float32");
  if (dt != "float32" && dt != "float64")
    throw std::invalid_argument("make_norm(" + name + "): dtype must be 'float32' or 'float64', got '" + dt + "'");
  const DType dtype = dt == "float64" ? DType::Float64 : DType::Float32;

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

}  // namespace nl
