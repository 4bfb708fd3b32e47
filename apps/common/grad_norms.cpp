#include "common/grad_norms.h"

#include <cstdio>
#include <sstream>
#include <utility>
#include <stdexcept>

#include "engine/norm_settings.h"
#include "engine/options.h"
#include "nn/norm/factory.h"

namespace nlapp {

std::vector<std::string> parse_norm_list(const std::string& spec) {
  if (spec == "all") return nl::layernorm_family_names();
  std::vector<std::string> out;
  std::stringstream ss(spec);
  for (std::string name; std::getline(ss, name, ',');) {
    nl::theory::require_variant(name);
    out.push_back(name);
  }
  if (out.empty()) throw std::invalid_argument("--norm: no norm given (use 'all' or a comma-separated list)");
  return out;
}

nl::theory::Estimator parse_estimator(const std::string& name) {
  if (name == "paper") return nl::theory::Estimator::paper();
  if (name == "code") return nl::theory::Estimator::released_code();
  throw std::invalid_argument("--estimator must be 'paper' or 'code', got '" + name + "'");
}

void check_adanorm_options(double C, double k) {
  // Through parse_flag_value, as `normlab train` reads --C, so the message is train's ("got 'nan'").
  auto check = [](const OptionSpec& spec, double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", v);
    parse_flag_value(spec, text);
  };
  for (const OptionSpec& spec : norm_settings("adanorm", C))
    if (spec.key == "C") check(spec, C);
  check(option("k", OptKind::Float, k, "AdaNorm's k"), k);
}

std::shared_ptr<nl::Module> make_grad_norm(const std::string& name, int64_t H, const nl::theory::Estimator& est,
                                           const std::string& impl, double C, double k) {
  nl::theory::require_variant(name);
  check_adanorm_options(C, k);
  if (H < 2) throw std::invalid_argument("--H must be at least 2 (a norm over one feature is constant), got " +
                                         std::to_string(H));
  nlohmann::json o{{"impl", impl}, {"eps", est.eps}, {"unbiased", est.unbiased}, {"eps_inside", est.eps_inside},
                   {"dtype", "float64"}};
  for (const auto& [key, value] : {std::pair<const char*, double>{"C", C}, {"k", k}})  // AdaNorm's C and k
    if (nl::norm_accepts_option(name, key)) o[key] = value;
  return nl::make_norm(name, H, o);
}

}  // namespace nlapp
