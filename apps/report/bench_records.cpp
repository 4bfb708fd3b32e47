#include "report/bench_records.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/markdown_table.h"

namespace nlapp {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string ratio(double a, double b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f×", a / b);
  return s;
}

}  // namespace

std::string format_bf16_bench_records(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("bf16-", 0) == 0 && e.path().extension() == ".json") files.push_back(e.path());
    }
  std::sort(files.begin(), files.end());
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
      rows.push_back({r.at("pytorch").value("config", f.stem().string()), env.at("cpu").value("model", "?"),
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
