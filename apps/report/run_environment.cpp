#include "report/run_environment.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include <stdlib.h>

#include "backends/backend.h"
#include "version.h"

namespace nlapp {
namespace {
// The value of the first "<key>\t: value" line of /proc/cpuinfo, or "".
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    k.erase(k.find_last_not_of(" \t") + 1);
    if (k == key) return colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  return "";
}
}  // namespace

std::string cpu_model_name() {
  const std::string m = cpuinfo_field("model name");
  return m.empty() ? "unknown" : m;
}

std::vector<std::string> cpu_kernel_flags() {
  std::istringstream in(cpuinfo_field("flags"));
  std::vector<std::string> all, out;
  for (std::string f; in >> f;) all.push_back(f);
  for (const char* f : {"avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"})
    if (std::find(all.begin(), all.end(), f) != all.end()) out.push_back(f);
  return out;
}

nlohmann::json run_environment(int threads, nl::Device device) {
  nlohmann::json env = {{"commit", nl::build_commit()},
                        {"cpu",
                         {{"model", cpu_model_name()},
                          {"flags", cpu_kernel_flags()},
                          {"cores", (int)std::thread::hardware_concurrency()}}},
                        {"threads", threads}};
  for (const auto& [field, key] : {std::pair{"cpu family", "family"}, std::pair{"model", "model_number"}}) {
    const std::string v = cpuinfo_field(field);
    if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) env["cpu"][key] = std::stoi(v);
  }
  if (!device.is_cpu()) env["device"] = {{"name", device.str()}, {"model", nl::device_name(device)}};
  // What else ran: the 1, 5 and 15 minute load averages when the record was written (a run's wall time
  // means little without them on a shared machine).
  double load[3];
  if (getloadavg(load, 3) == 3) env["load_average"] = {load[0], load[1], load[2]};
  return env;
}

std::string cpu_label(const nlohmann::json& environment) {
  if (!environment.is_object() || !environment.contains("cpu")) return "?";
  const nlohmann::json& cpu = environment["cpu"];
  std::string s = cpu.value("model", "?");
  if (cpu.contains("family") && cpu.contains("model_number"))
    s += " (family " + std::to_string(cpu["family"].get<int>()) + " model " +
         std::to_string(cpu["model_number"].get<int>()) + ")";
  return s;
}

std::string machine_label(const nlohmann::json& environment, const std::string& device) {
  if (device.empty() || device == "cpu") return cpu_label(environment);
  if (environment.is_object() && environment.contains("device") && environment["device"].contains("model"))
    return environment["device"]["model"].get<std::string>();
  return device.substr(0, device.find(':')) + " (model not recorded; host " + cpu_label(environment) + ")";
}

}  // namespace nlapp
