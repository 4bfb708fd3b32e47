#include "report/bench_records.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
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

std::string ratio(double a, double b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f×", a / b);
  return s;
}

// "median (min–max)" of a `step_ms` object, one decimal.
std::string median_range(const json& ms) {
  return format_fixed(ms.at("median").get<double>(), 1) + " (" + format_fixed(ms.at("min").get<double>(), 1) +
         "–" + format_fixed(ms.at("max").get<double>(), 1) + ")";
}

}  // namespace

std::string format_float32_bench_records(const fs::path& dir, const std::vector<std::string>& configs) {
  std::vector<std::vector<std::string>> rows;
  for (const fs::path& f : record_files(dir, name_matches("fp32-", ".json"))) {
    try {
      std::ifstream in(f);
      const json j = json::parse(in);
      const json& env = j.at("environment");
      for (const json& r : j.at("runs")) {
        const json& nl = r.at("normlab");
        const json& pt = r.at("pytorch");
        const std::string config = pt.value("config", j.at("task").get<std::string>());
        if (std::find(configs.begin(), configs.end(), config) == configs.end()) break;  // one config a file
        std::string rounds;
        for (const json& rd : r.value("rounds", json::array()))
          rounds += (rounds.empty() ? "" : ", ") + format_fixed(rd.at("time_ratio").get<double>(), 2);
        const double nl_ms = nl.at("step_ms").at("median").get<double>();
        const double pt_ms = pt.at("step_ms").at("median").get<double>();
        rows.push_back({config, std::to_string(r.at("threads").get<int>()), cpu_label(env),
                        env.value("commit", "?"), median_range(nl.at("step_ms")), median_range(pt.at("step_ms")),
                        ratio(nl_ms, pt_ms) + (rounds.empty() ? "" : " (" + rounds + ")"),
                        ratio(nl.at("step_cpu_ms").at("median").get<double>(),
                              pt.at("step_cpu_ms").at("median").get<double>()),
                        format_fixed(nl.value("gemm_gflop_per_s", NAN), 1),
                        format_fixed(nl.value("peak_rss_mib", NAN), 0) + " / " +
                            format_fixed(pt.value("peak_rss_mib", NAN), 0)});
      }
    } catch (const json::exception& e) {
      throw std::runtime_error(f.string() + ": not a `normlab bench --json` record with PyTorch's runs (" +
                               e.what() + ")");
    }
  }
  // No path in the text: the docs embed it, and the registry's location differs between checkouts.
  if (rows.empty()) return "no records yet (bench/fp32-*.json in the registry)\n";
  return markdown_table({"config", "threads", "CPU", "commit", "normlab ms/step", "PyTorch ms/step",
                         "time ratio (per round)", "CPU-time ratio", "normlab GEMM GFLOP/s",
                         "peak RSS MiB normlab / PyTorch"},
                        rows, {Align::Left, Align::Right, Align::Left, Align::Left, Align::Right, Align::Right,
                               Align::Right, Align::Right, Align::Right, Align::Right});
}

std::string format_bf16_bench_records(const fs::path& dir) {
  const std::vector<fs::path> files = record_files(dir, name_matches("bf16-", ".json"));
  // No path in the text: the docs embed it, and the registry's location differs between checkouts.
  if (files.empty()) return "no records yet (bench/bf16-*.json in the registry)\n";
  std::vector<std::vector<std::string>> rows;
  for (const fs::path& f : files) {
    json j;
    try {
      std::ifstream in(f);
      j = json::parse(in);
      const json& r = j.at("runs").at(0);
      const double b = r.at("normlab").at("step_ms").at("median").get<double>();
      const double f32 = r.at("normlab_float32").at("step_ms").at("median").get<double>();
      const double pt = r.at("pytorch").at("step_ms").at("median").get<double>();
      const json& env = j.at("environment");
      rows.push_back({r.at("pytorch").value("config", f.stem().string()), cpu_label(env),
                      env.value("commit", "?"), format_fixed(b, 1), format_fixed(f32, 1), format_fixed(pt, 1),
                      ratio(b, pt), ratio(f32, b),
                      format_fixed(r["normlab"].value("peak_rss_mib", NAN), 0) + " / " +
                          format_fixed(r["normlab_float32"].value("peak_rss_mib", NAN), 0) + " / " +
                          format_fixed(r["pytorch"].value("peak_rss_mib", NAN), 0),
                      format_fixed(r["normlab"].value("gemm_gflop_per_s", NAN), 1),
                      format_fixed(1000.0 * r["normlab"].value("step_gflop", NAN) /
                                       r["normlab"].value("gemm_gflop_per_s", NAN), 0)});
    } catch (const json::exception& e) {
      throw std::runtime_error(f.string() + ": not a `normlab bench --bf16 --json` record (" + e.what() + ")");
    }
  }
  return markdown_table({"config", "CPU", "commit", "normlab bf16 ms", "normlab float32 ms", "PyTorch autocast ms",
                         "bf16 / PyTorch", "float32 / bf16", "peak RSS MiB bf16 / float32 / PyTorch",
                         "bf16 GEMM GFLOP/s", "bf16 ms in GEMMs"},
                        rows, {Align::Left, Align::Left, Align::Left, Align::Right, Align::Right, Align::Right,
                               Align::Right, Align::Right, Align::Right, Align::Right, Align::Right});
}

}  // namespace nlapp
