#include "report/registry_cost.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/markdown_table.h"
#include "report/record_files.h"
#include "report/run_environment.h"

namespace nlapp {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Cost {
  std::vector<double> train_min, test_min;
  std::set<std::string> machines;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::string format_registry_cost(const fs::path& root) {
  std::map<std::pair<std::string, std::string>, Cost> by;  // (group/column, device) -> runs
  for (const fs::path& f : record_files(root, name_matches("seed", ".json"))) {
    try {
      std::ifstream in(f);
      const json j = json::parse(in);
      const json& reg = j.at("registry");
      if (j.value("status", "done") != "done") continue;  // a diverged run's time says nothing of a full one
      const std::string device_name = j.at("settings").value("device", "cpu");
      const std::string device = device_name.substr(0, device_name.find(':'));
      Cost& c = by[{reg.at("group").get<std::string>() + "/" + reg.at("column").get<std::string>(), device}];
      c.train_min.push_back(j.at("train_seconds").get<double>() / 60.0);
      c.test_min.push_back(j.value("test_seconds", 0.0) / 60.0);
      c.machines.insert(machine_label(j.at("environment"), device_name));
    } catch (const json::exception& e) {
      throw std::runtime_error(f.string() + ": not a run record of the registry (" + e.what() +
                               "); restore it with git or delete it");
    }
  }
  // No path in the text: the docs embed it, and the registry's location differs between checkouts.
  if (by.empty()) return "no run records yet\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& [key, c] : by) {
    const auto [lo, hi] = std::minmax_element(c.train_min.begin(), c.train_min.end());
    std::string machines;
    for (const auto& m : c.machines) machines += (machines.empty() ? "" : "; ") + m;
    rows.push_back({key.first, key.second, std::to_string(c.train_min.size()),
                    format_fixed(median(c.train_min), 1) + " (" + format_fixed(*lo, 1) + "–" + format_fixed(*hi, 1) + ")",
                    format_fixed(median(c.test_min), 1), machines});
  }
  return markdown_table({"registry column", "device", "runs", "training min / run, median (min–max)",
                         "test min / run, median", "machines"},
                        rows, {Align::Left, Align::Left, Align::Right, Align::Right, Align::Right, Align::Left});
}

}  // namespace nlapp
