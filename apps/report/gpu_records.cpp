#include "report/gpu_records.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/markdown_table.h"
#include "report/record_files.h"

namespace nlapp {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::vector<std::string> lines_of(const fs::path& f) {
  std::vector<std::string> out;
  std::ifstream in(f);
  for (std::string l; std::getline(in, l);)
    if (l.find_first_not_of(" \t\r") != std::string::npos) out.push_back(l);  // blank lines dropped
  return out;
}

// The text after `prefix` on the first line that starts with it, or "".
std::string after(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& l : lines)
    if (l.rfind(prefix, 0) == 0) return l.substr(prefix.size());
  return "";
}

json read_json(const fs::path& f) {
  std::ifstream in(f);
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw std::runtime_error(f.string() + ": not valid JSON (restore it with git checkout)");
  return j;
}

std::string op_check(const fs::path& f) {
  if (!fs::exists(f)) return "—";
  const json rows = read_json(f);
  if (!rows.is_array()) throw std::runtime_error(f.string() + ": not an op-check record (a JSON array of rows)");
  const auto failed = std::count_if(rows.begin(), rows.end(), [](const json& r) { return !r.value("pass", false); });
  return std::to_string(rows.size()) + " rows, " + std::to_string(failed) + " failed";
}

// update -> train_loss of a metrics.jsonl.
std::map<long, double> losses(const fs::path& f) {
  std::map<long, double> m;
  for (const auto& l : lines_of(f)) {
    const json r = json::parse(l, nullptr, false);
    if (r.is_object() && r.contains("update") && r.contains("train_loss"))
      m[r["update"].get<long>()] = r["train_loss"].get<double>();
  }
  return m;
}

std::string loss_difference(const fs::path& cpu, const fs::path& gpu) {
  if (!fs::exists(cpu) || !fs::exists(gpu)) return "—";
  const auto c = losses(cpu), g = losses(gpu);
  double worst = 0;
  int n = 0;
  for (const auto& [u, v] : c)
    if (auto it = g.find(u); it != g.end()) {
      worst = std::max(worst, std::abs(it->second - v) / std::max(std::abs(v), 1e-12));
      ++n;
    }
  if (n == 0) return "no common updates";
  char s[64];
  std::snprintf(s, sizeof s, "%.1e (%d losses)", worst, n);
  return s;
}

// "normlab ms / PyTorch ms (ratio)" of a bench record, and normlab float32 of the same rounds for a --bf16 one.
std::string bench(const fs::path& f) {
  if (!fs::exists(f)) return "—";
  try {
    const json r = read_json(f).at("runs").at(0);
    const double n = r.at("normlab").at("step_ms").at("median").get<double>();
    const double p = r.at("pytorch").at("step_ms").at("median").get<double>();
    std::string s = format_fixed(n, 2) + " / " + format_fixed(p, 2) + " (" + format_fixed(n / p, 2) + "×)";
    if (r.contains("normlab_float32"))
      s += "; float32 " + format_fixed(r["normlab_float32"].at("step_ms").at("median").get<double>(), 2);
    return s;
  } catch (const json::exception& e) {
    throw std::runtime_error(f.string() + ": not a `normlab bench --json` record (" + e.what() + ")");
  }
}

// "median [min–max]" of a bench side's step_ms.
std::string spread(const json& side) {
  const json& t = side.at("step_ms");
  return format_fixed(t.at("median").get<double>(), 2) + " [" + format_fixed(t.at("min").get<double>(), 2) + "–" +
         format_fixed(t.at("max").get<double>(), 2) + "]";
}

}  // namespace

std::string format_gpu_bench_records(const fs::path& dir) {
  const std::vector<fs::path> files = record_files(dir, name_matches("bench-", ".json"));
  if (files.empty()) return "no records yet (gpu/<session>/bench-*.json in the registry)\n";
  std::vector<std::vector<std::string>> rows;
  for (const fs::path& f : files) {
    try {
      const json j = read_json(f);
      const json& s = j.at("settings");
      const json& r = j.at("runs").at(0);
      const bool bf16 = r.contains("normlab_float32");
      const double n = r.at("normlab").at("step_ms").at("median").get<double>();
      const json& p = r.at("pytorch").at("step_ms");
      const std::string layers = s.contains("decoder_layers") && j.value("task", "") == "mt"
                                     ? std::to_string(s.value("encoder_layers", 0)) + "+" +
                                           std::to_string(s.value("decoder_layers", 0))
                                     : std::to_string(s.value("encoder_layers", 0));
      rows.push_back({fs::relative(f, dir).generic_string(), s.value("device", "?"),
                      j.value("task", "?") + ", d_model " + std::to_string(s.value("d_model", 0)) + ", " + layers +
                          " layers, " + std::to_string(s.value("bench_batch", 0)) + " x " +
                          std::to_string(s.value("bench_len", 0)) + " tokens",
                      bf16 ? "bf16 (PyTorch autocast)" : "float32", spread(r.at("normlab")), spread(r.at("pytorch")),
                      format_fixed(n / p.at("median").get<double>(), 2) + "×",
                      format_fixed(n / p.at("min").get<double>(), 2) + "×",
                      bf16 ? format_fixed(r["normlab_float32"].at("step_ms").at("median").get<double>(), 2) : "—"});
    } catch (const json::exception& e) {
      throw std::runtime_error(f.string() + ": not a `normlab bench --json` record (" + e.what() + ")");
    }
  }
  return markdown_table({"record", "device", "model, batch", "precision", "normlab ms median [min–max]",
                         "PyTorch ms median [min–max]", "median / median", "normlab median / PyTorch min",
                         "normlab float32 ms (same rounds)"},
                        rows, {Align::Left, Align::Left, Align::Left, Align::Left, Align::Right, Align::Right,
                               Align::Right, Align::Right, Align::Right});
}

std::string format_gpu_check_records(const fs::path& dir) {
  std::vector<fs::path> folders;
  for (const fs::path& f : record_files(dir, [](const std::string& n) { return n == "summary.md"; }))
    folders.push_back(f.parent_path());
  std::sort(folders.begin(), folders.end());  // a folder before its sub-folders (an earlier check of the session)
  // No path in the text beyond the folder's name under gpu/: the registry's location differs between checkouts.
  if (folders.empty()) return "no records yet (gpu/<session>/summary.md in the registry)\n";
  std::vector<std::vector<std::string>> rows;
  for (const fs::path& d : folders) {
    const auto sum = lines_of(d / "summary.md");
    const auto tests = lines_of(d / "cuda-tests.log");
    std::string title = after(sum, "# gpu-check ");
    title = title.substr(0, title.find(','));
    rows.push_back({fs::relative(d, dir).generic_string(), after(sum, "- machine: "), title,
                    tests.empty() ? "—" : tests.back(), op_check(d / "op-check.json"),
                    loss_difference(d / "train-cpu-metrics.jsonl", d / "train-cuda-metrics.jsonl"),
                    bench(d / "bench-transformer.json"), bench(d / "bench-transformer-bf16.json")});
  }
  return markdown_table({"check", "GPU / host CPU", "commit", "CUDA tests", "op check (cuda:0 vs cpu)",
                         "training losses, worst relative difference cuda vs cpu",
                         "bench float32 ms: normlab / PyTorch", "bench bf16 ms: normlab / PyTorch autocast"},
                        rows, {Align::Left, Align::Left, Align::Left, Align::Left, Align::Left, Align::Left,
                               Align::Left, Align::Left});
}

}  // namespace nlapp
