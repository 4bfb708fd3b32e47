#include "probes/probe_common.h"

#include <cmath>
#include <stdexcept>

namespace nlapp {
using json = nlohmann::json;

nl::Module& find_probe_layer(nl::Module& model, const std::string& name,
                             const std::function<bool(const std::string&, const nl::Module&)>& fallback,
                             const std::string& probe, const std::string& fallback_what) {
  std::string avail;
  for (auto& [n, m] : model.named_modules()) {
    if (name.empty() ? fallback(n, *m) : n == name) return const_cast<nl::Module&>(*m);
    if (!n.empty()) avail += (avail.empty() ? "" : ", ") + n;
  }
  throw std::invalid_argument(probe + ": the model has no module " +
                              (name.empty() ? fallback_what : "'" + name + "'") + "; --layer takes one of: " + avail);
}

json probe_run_settings(json settings, const std::string& norm, int64_t steps, const std::filesystem::path& out) {
  settings["norm"] = norm;
  settings["max_update"] = steps;
  settings["max_epoch"] = 1000000;
  settings["no_save"] = true;
  settings["no_test"] = true;  // the probe records statistics; no final test pass (an mt beam search costs minutes)
  settings["validate_interval"] = 0;
  settings["validate_interval_updates"] = 0;
  settings["quiet"] = true;
  settings["overwrite"] = true;  // a probe's training folder is scratch: a rerun replaces it
  settings["out"] = (out / "runs" / norm).string();
  return settings;
}

Series series_of(const std::vector<json>& recs, const std::string& field, const std::string& name) {
  Series s{name, {}, {}};
  for (const auto& r : recs) {
    s.x.push_back(r["step"].get<double>());
    s.y.push_back(r.contains(field) && r[field].is_number() ? r[field].get<double>() : std::nan(""));
  }
  return s;
}

double field_mean(const std::vector<json>& recs, const std::string& field) {
  double s = 0;
  int64_t n = 0;
  for (const auto& r : recs)
    if (r.contains(field) && r[field].is_number()) {
      s += r[field].get<double>();
      ++n;
    }
  return n ? s / (double)n : std::nan("");
}

}  // namespace nlapp
