// Tests for apps/report/bench_records: the speed tables of docs/mixed-precision.md, docs/bench.md and README.md
// from the committed `normlab bench [--bf16] --json` records.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/bench_records.h"
#include "report/run_environment.h"

using namespace nlapp;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

fs::path fresh_dir() {
  const fs::path d = fs::temp_directory_path() / ("normlab-bench-records-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A record as `bench --bf16 --json` writes it (the fields the table reads).
std::string record(double bf16_ms, double f32_ms, double torch_ms) {
  auto run = [](double ms, double rss) {
    return R"({"step_ms": {"median": )" + std::to_string(ms) + R"(}, "peak_rss_mib": )" + std::to_string(rss) +
           R"(, "gemm_gflop_per_s": 200.0, "step_gflop": 100.0)";
  };
  return R"({"runs": [{"normlab": )" + run(bf16_ms, 700) + "}, \"normlab_float32\": " + run(f32_ms, 800) +
         "}, \"pytorch\": " + run(torch_ms, 1300) + R"(, "config": "small"}}],
           "environment": {"commit": "abc123", "cpu": {"model": "AMD EPYC"}}})";
}

}  // namespace

TEST_CASE("bench records: one row per bf16 record, ratios from the medians", "[report][bench]") {
  const fs::path d = fresh_dir();
  std::ofstream(d / "bf16-small.json") << record(1200, 2100, 1800);
  std::ofstream(d / "other.json") << "{}";  // not a bf16 record: ignored
  const std::string t = format_bf16_bench_records(d);
  CHECK_THAT(t, Contains("| small ") && Contains("AMD EPYC") && Contains("abc123"));
  CHECK_THAT(t, Contains("0.67×"));   // 1200 / 1800
  CHECK_THAT(t, Contains("1.75×"));   // 2100 / 1200
  CHECK_THAT(t, Contains("700 / 800 / 1300"));
  CHECK_THAT(t, Contains(" 500 |"));  // 100 GFLOP at 200 GFLOP/s: 500 ms in the products
  fs::remove_all(d);
}

TEST_CASE("bench records: none says so, a broken record names its file", "[report][bench]") {
  const fs::path d = fresh_dir();
  CHECK_THAT(format_bf16_bench_records(d), Contains("no records"));
  std::ofstream(d / "bf16-cls.json") << R"({"runs": []})";
  CHECK_THROWS_WITH(format_bf16_bench_records(d), Contains("bf16-cls.json") && Contains("bench --bf16 --json"));
  fs::remove_all(d);
}

namespace {

// A float32 record as `bench <task> --json` writes it: one run per thread count, PyTorch beside normlab.
std::string float32_record(const std::string& task, const std::string& torch_config) {
  auto side = [](double med, double cpu, double rss, const std::string& extra) {
    return R"({"step_ms": {"median": )" + std::to_string(med) + R"(, "min": )" + std::to_string(med - 1) +
           R"(, "max": )" + std::to_string(med + 2) + R"(}, "step_cpu_ms": {"median": )" + std::to_string(cpu) +
           R"(}, "peak_rss_mib": )" + std::to_string(rss) + extra + "}";
  };
  const std::string cfg = torch_config.empty() ? "" : R"(, "config": ")" + torch_config + "\"";
  return R"({"task": ")" + task + R"(", "environment": {"commit": "def456", "cpu": {"model": "Intel Xeon"}},
            "runs": [{"threads": 1, "normlab": )" +
         side(6, 6, 41, R"(, "gemm_gflop_per_s": 78.0)") + ", \"pytorch\": " + side(12, 10, 264, cfg) +
         R"(, "rounds": [{"time_ratio": 0.51}, {"time_ratio": 0.55}]},
                     {"threads": 2, "normlab": )" +
         side(5, 9, 41, "") + ", \"pytorch\": " + side(8, 12, 265, cfg) + "}]}";
}

}  // namespace

TEST_CASE("float32 bench records: a row per thread count, filtered by config", "[report][bench]") {
  const fs::path d = fresh_dir();
  std::ofstream(d / "fp32-mnist-1.json") << float32_record("mnist", "");
  std::ofstream(d / "fp32-cls-1.json") << float32_record("cls", "cls");
  std::ofstream(d / "bf16-cls.json") << "{}";  // a bf16 record: not this table's
  const std::string t = format_float32_bench_records(d, {"mnist"});
  CHECK_THAT(t, Contains("| mnist  |       1 | Intel Xeon | def456 ") && Contains("| mnist  |       2 |"));
  CHECK_THAT(t, Contains("6.0 (5.0–8.0)") && Contains("12.0 (11.0–14.0)"));
  CHECK_THAT(t, Contains("0.50× (0.51, 0.55)"));  // 6 / 12, then each round's ratio
  CHECK_THAT(t, Contains("0.60×"));               // CPU time 6 / 10
  CHECK_THAT(t, Contains("0.62×"));               // 2 threads: 5 / 8, no rounds recorded
  CHECK_THAT(t, Contains("41 / 264") && Contains("78.0"));
  CHECK_THAT(t, !Contains("cls"));
  CHECK_THAT(format_float32_bench_records(d, {"cls", "small"}), Contains("| cls ") && !Contains("mnist"));
  CHECK_THAT(format_float32_bench_records(d, {"iwslt"}), Contains("no records"));
  std::ofstream(d / "fp32-small-1.json") << R"({"task": "mt", "environment": {}, "runs": [{"threads": 1, "normlab": {}}]})";
  CHECK_THROWS_WITH(format_float32_bench_records(d, {"mnist"}), Contains("fp32-small-1.json") && Contains("PyTorch"));
  fs::remove_all(d);
}

TEST_CASE("bench records: the CPU is named with its family and model number when the record has them",
          "[report][bench]") {
  CHECK(cpu_label(nlohmann::json::parse(R"({"cpu": {"model": "Intel Xeon"}})")) == "Intel Xeon");
  CHECK(cpu_label(nlohmann::json::parse(R"({"cpu": {"model": "Intel Xeon", "family": 6, "model_number": 207}})")) ==
        "Intel Xeon (family 6 model 207)");
  CHECK(cpu_label(nlohmann::json::object()) == "?");
}
