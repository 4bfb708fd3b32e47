#pragma once
// NormOptions: the JSON options of one norm, read with their types checked, for the norm factories of
// the norm table (factory.h). The keys were already checked against the norm's descriptor.
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "tensor/dtype.h"

namespace nl {

/// The options object of norm `norm` (canonical name) with typed getters. Throws std::invalid_argument
/// naming the norm, the key and the value when a value has the wrong type.
class NormOptions {
 public:
  NormOptions(std::string norm, nlohmann::json opts) : norm_(std::move(norm)), o_(std::move(opts)) {
    if (o_.is_null()) o_ = nlohmann::json::object();
  }
  /// The canonical name of the norm these options are for.
  const std::string& norm() const { return norm_; }
  /// opts[key] as T (bool, double, int64_t or std::string), or `fallback` when the key is absent.
  template <typename T>
  T get(const std::string& key, T fallback) const {
    if (!o_.contains(key)) return fallback;
    const auto& v = o_.at(key);
    bool ok = false;
    if constexpr (std::is_same_v<T, bool>) ok = v.is_boolean();
    else if constexpr (std::is_same_v<T, double>) ok = v.is_number();
    else if constexpr (std::is_same_v<T, int64_t>) ok = v.is_number_integer();
    else ok = v.is_string();
    if (!ok)
      throw std::invalid_argument("make_norm(" + norm_ + "): option '" + key + "' has the wrong type (" +
                                  std::string(v.type_name()) + "): " + v.dump());
    return v.get<T>();
  }
  /// "eps" (default 1e-5).
  double eps(double fallback = 1e-5) const { return get<double>("eps", fallback); }
  /// "affine" (default `fallback`).
  bool affine(bool fallback = true) const { return get<bool>("affine", fallback); }
  /// `c` with "eps" and "affine" read over its defaults (the options every norm outside the LayerNorm family
  /// takes; `Config` has fields eps and affine).
  template <typename Config>
  Config with_common(Config c) const {
    c.eps = eps(c.eps);
    c.affine = affine(c.affine);
    return c;
  }
  /// "dtype" of the parameters: "float32" (default) or "float64"; throws on another value.
  DType dtype() const {
    const std::string dt = get<std::string>("dtype", "float32");
    if (dt != "float32" && dt != "float64")
      throw std::invalid_argument("make_norm(" + norm_ + "): dtype must be 'float32' or 'float64', got '" + dt + "'");
    return dt == "float64" ? DType::Float64 : DType::Float32;
  }

 private:
  std::string norm_;
  nlohmann::json o_;
};

}  // namespace nl
