// Tests for apps/report/gpu_records: the GPU check table of docs/cuda.md from the committed
// scripts/gpu-check.sh reports (results/gpu/<session>/).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "data_text/temp_dir.h"
#include "report/gpu_records.h"

using namespace nlapp;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

void write_check(const fs::path& d, bool passed) {
  fs::create_directories(d);
  std::ofstream(d / "summary.md") << "# gpu-check abc1234, 2026-11-27T05:53:05Z\n"
                                  << "- machine: NVIDIA H100 80GB HBM3, 580.159.04 / Intel(R) Xeon(R) Processor\n";
  std::ofstream(d / "cuda-tests.log") << "...\n"
                                      << (passed ? "All tests passed (1198 assertions in 24 test cases)"
                                                 : "test cases:   24 |   23 passed | 1 failed")
                                      << "\n\n";  // Catch ends its log with a blank line
  std::ofstream(d / "op-check.json") << R"([{"op": "gemm.nn", "pass": true}, {"op": "copy", "pass": )"
                                     << (passed ? "true" : "false") << "}]";
  std::ofstream(d / "train-cpu-metrics.jsonl") << R"({"update": 10, "train_loss": 10.0})" << "\n"
                                               << R"({"update": 20, "train_loss": 8.0})" << "\n"
                                               << R"({"epoch": 1, "valid_loss": 7.0})" << "\n";
  std::ofstream(d / "train-cuda-metrics.jsonl") << R"({"update": 10, "train_loss": 10.001})" << "\n"
                                                << R"({"update": 20, "train_loss": 8.0})" << "\n";
  std::ofstream(d / "bench-transformer.json")
      << R"({"runs": [{"normlab": {"step_ms": {"median": 11.4}}, "pytorch": {"step_ms": {"median": 22.8}}}]})";
}

}  // namespace

TEST_CASE("gpu records: one row per check folder, from its files", "[report][gpu]") {
  const nltest::TempDir td("gpu-records");
  const fs::path d = td.path / "gpu";
  CHECK_THAT(format_gpu_check_records(d), Contains("no records"));
  write_check(d / "h100-2026-11-27", true);
  write_check(d / "h100-2026-11-27" / "before-fix", false);
  std::ofstream(d / "h100-2026-11-27" / "before-fix" / "bench-transformer-bf16.json")
      << R"({"runs": [{"normlab": {"step_ms": {"median": 94.0}}, "normlab_float32": {"step_ms": {"median": 11.5}},
             "pytorch": {"step_ms": {"median": 31.0}}}]})";
  const std::string t = format_gpu_check_records(d);
  CHECK_THAT(t, Contains("| h100-2026-11-27 ") && Contains("| h100-2026-11-27/before-fix "));
  CHECK_THAT(t, Contains("NVIDIA H100 80GB HBM3") && Contains("abc1234"));
  CHECK_THAT(t, Contains("All tests passed (1198 assertions in 24 test cases)") && Contains("23 passed \\| 1 failed"));  // a cell escapes its pipes
  CHECK_THAT(t, Contains("2 rows, 0 failed") && Contains("2 rows, 1 failed"));
  CHECK_THAT(t, Contains("1.0e-04 (2 losses)"));  // |10.001 - 10| / 10; the valid line is not a training loss
  CHECK_THAT(t, Contains("11.40 / 22.80 (0.50×)"));
  CHECK_THAT(t, Contains("94.00 / 31.00 (3.03×); float32 11.50"));
  // The check folder first, its earlier check after it; a missing record is a dash.
  CHECK(t.find("| h100-2026-11-27 ") < t.find("before-fix"));
  CHECK_THAT(t, Contains("| — "));
}

TEST_CASE("gpu records: a broken record names its file", "[report][gpu]") {
  const nltest::TempDir td("gpu-records-broken");
  write_check(td.path / "s", true);
  std::ofstream(td.path / "s" / "bench-transformer.json") << R"({"runs": []})";
  CHECK_THROWS_WITH(format_gpu_check_records(td.path), Contains("bench-transformer.json") && Contains("bench --json"));
  std::ofstream(td.path / "s" / "op-check.json") << "{broken";
  CHECK_THROWS_WITH(format_gpu_check_records(td.path), Contains("op-check.json") && Contains("not valid JSON"));
}

TEST_CASE("gpu bench records: one row per bench-*.json, with PyTorch's spread", "[report][gpu]") {
  const nltest::TempDir td("gpu-bench-records");
  const fs::path d = td.path / "gpu";
  CHECK_THAT(format_gpu_bench_records(d), Contains("no records"));
  fs::create_directories(d / "s" / "bench");
  std::ofstream(d / "s" / "bench" / "bench-iwslt-bf16.json")
      << R"({"task": "mt", "settings": {"device": "cuda:0", "d_model": 512, "encoder_layers": 6, "decoder_layers": 6,
             "bench_batch": 128, "bench_len": 32},
             "runs": [{"normlab": {"step_ms": {"median": 18.5, "min": 18.4, "max": 19.0}},
                       "normlab_float32": {"step_ms": {"median": 35.2, "min": 34.8, "max": 35.5}},
                       "pytorch": {"step_ms": {"median": 57.0, "min": 37.0, "max": 105.5}}}]})";
  const std::string t = format_gpu_bench_records(d);
  CHECK_THAT(t, Contains("s/bench/bench-iwslt-bf16.json") && Contains("cuda:0"));
  CHECK_THAT(t, Contains("mt, d_model 512, 6+6 layers, 128 x 32 tokens") && Contains("bf16 (PyTorch autocast)"));
  CHECK_THAT(t, Contains("18.50 [18.40–19.00]") && Contains("57.00 [37.00–105.50]"));
  CHECK_THAT(t, Contains("0.32×") && Contains("0.50×") && Contains("35.20"));  // 18.5/57, 18.5/37
  std::ofstream(d / "s" / "bench-broken.json") << R"({"runs": [{}]})";
  CHECK_THROWS_WITH(format_gpu_bench_records(d), Contains("bench-broken.json"));
}
