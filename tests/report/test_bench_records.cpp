// Tests for apps/report/bench_records: the bf16 speed table of docs/mixed-precision.md from the committed
// `normlab bench --bf16 --json` records.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/bench_records.h"

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
