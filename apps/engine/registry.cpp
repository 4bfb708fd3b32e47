#include "engine/registry.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <system_error>
#include <stdexcept>

#include "report/atomic_file.h"

namespace nlapp {
using json = nlohmann::json;
namespace fs = std::filesystem;

std::string RegistryKey::relative_path() const {
  for (const std::string* part : {&group, &column, &variant})
    if (part->empty() || part->find_first_of("/\\") != std::string::npos || *part == "." || *part == "..")
      throw std::invalid_argument("registry key part '" + *part + "' (of " + group + "/" + column + "/" + variant +
                                  ") must be a non-empty name without '/' or '\\'");
  if (seed < 1) throw std::invalid_argument("registry key: seed must be >= 1, got " + std::to_string(seed));
  return group + "/" + column + "/" + variant + "/seed" + std::to_string(seed) + ".json";
}

json make_registry_record(const json& result, const RegistryKey& key) {
  json r = result;
  r["registry"] = {{"group", key.group}, {"column", key.column}, {"variant", key.variant}, {"seed", key.seed}};
  r["status"] = result.value("diverged", false) ? "diverged" : "done";
  return r;
}

namespace {
json read_record_file(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("registry record " + p.string() + " cannot be read (check its permissions)");
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("settings") || !j["settings"].is_object())
    throw std::runtime_error("registry record " + p.string() +
                             " is damaged (not a JSON object with \"settings\"): restore it with git (git checkout -- " +
                             p.string() + ") or delete it to run that experiment again");
  // A finished run's numbers are what the tables read: a metric that is not a number (null, a string) would
  // print as "nan" in a generated table.
  if (j.value("status", "done") == "done") {
    std::string bad;
    if (!j.contains("test") || !j["test"].is_object()) bad = "\"test\" is not an object of metrics";
    else
      for (const auto& [k, v] : j["test"].items())
        if (!v.is_number()) bad = "test metric \"" + k + "\" is " + v.dump() + ", not a number";
    if (bad.empty() && j.contains("best_valid") && !j["best_valid"].is_number())
      bad = "\"best_valid\" is " + j["best_valid"].dump() + ", not a number";
    if (!bad.empty())
      throw std::runtime_error("registry record " + p.string() + " is damaged (" + bad +
                               "): restore it with git (git checkout -- " + p.string() +
                               ") or delete it to run that experiment again");
  }
  return j;
}
}  // namespace

json read_registry_record(const fs::path& root, const RegistryKey& key) {
  const fs::path p = root / key.relative_path();
  if (!fs::exists(p)) return nullptr;
  return read_record_file(p);
}

int recorded_seeds(const fs::path& root, const std::string& group, int minimum) {
  int most = minimum;
  std::error_code ec;
  if (!fs::is_directory(root / group, ec)) return most;
  for (auto it = fs::recursive_directory_iterator(root / group, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= 9 || name.rfind("seed", 0) != 0 || name.substr(name.size() - 5) != ".json") continue;
    const std::string digits = name.substr(4, name.size() - 9);
    if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    if (const int seed = std::stoi(digits); seed <= kMaxSeeds) most = std::max(most, seed);
  }
  return most;
}

fs::path write_registry_record(const fs::path& root, const RegistryKey& key, const json& record) {
  const fs::path p = root / key.relative_path();
  fs::create_directories(p.parent_path());
  write_file_atomic(p, record.dump(1) + "\n");
  return p;
}

}  // namespace nlapp
