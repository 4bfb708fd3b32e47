// Tests for apps/report/registry_cost: the minutes per run of every registry column, from the records.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/registry_cost.h"

using namespace nlapp;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

void write_record(const fs::path& root, const std::string& col, int seed, double train_s, const std::string& device,
                  const std::string& cpu, const std::string& status = "done", const std::string& gpu = "") {
  const fs::path d = root / "mnist" / col / "layernorm";
  fs::create_directories(d);
  std::ofstream(d / ("seed" + std::to_string(seed) + ".json"))
      << R"({"registry": {"group": "mnist", "column": ")" << col << R"(", "variant": "layernorm", "seed": )" << seed
      << R"(}, "status": ")" << status << R"(", "settings": {"device": ")" << device << R"("}, "train_seconds": )"
      << train_s << R"(, "test_seconds": 30, "environment": {"cpu": {"model": ")" << cpu << R"("})"
      << (gpu.empty() ? "" : R"(, "device": {"name": ")" + device + R"(", "model": ")" + gpu + R"("})") << "}}";
}

}  // namespace

TEST_CASE("registry cost: runs and minutes per column and device, diverged runs left out", "[report][registry]") {
  const fs::path root = fs::temp_directory_path() / ("normlab-registry-cost-" + std::to_string(::getpid()));
  fs::remove_all(root);
  CHECK_THAT(format_registry_cost(root), Contains("no run records"));
  write_record(root, "one-epoch", 1, 600, "cpu", "AMD EPYC");
  write_record(root, "one-epoch", 2, 1200, "cpu", "Intel Xeon");
  write_record(root, "one-epoch", 3, 900, "cpu", "Intel Xeon");
  write_record(root, "one-epoch", 4, 60, "cpu", "Intel Xeon", "diverged");
  write_record(root, "one-epoch", 5, 120, "cuda:0", "Intel Xeon");
  write_record(root, "one-epoch", 6, 120, "cuda:0", "Intel Xeon", "done", "NVIDIA H200 (sm_90, 139.8 GiB)");
  fs::create_directories(root / "bench");
  std::ofstream(root / "bench" / "fp32-cls.json") << "{}";  // not a run record: skipped by its name
  const std::string t = format_registry_cost(root);
  CHECK_THAT(t, Contains("| mnist/one-epoch | cpu    |    3 |") && Contains("15.0 (10.0–20.0)"));
  CHECK_THAT(t, Contains("AMD EPYC; Intel Xeon"));
  CHECK_THAT(t, Contains("| mnist/one-epoch | cuda   |    2 |") && Contains("2.0 (2.0–2.0)"));
  // A GPU run names its GPU; one recorded before GPU models were says so and names its host.
  CHECK_THAT(t, Contains("NVIDIA H200 (sm_90, 139.8 GiB); cuda (model not recorded; host Intel Xeon)"));
  CHECK_THAT(t, Contains("0.5"));  // 30 s of test
  std::ofstream(root / "mnist" / "one-epoch" / "layernorm" / "seed9.json") << R"({"settings": {}})";
  CHECK_THROWS_WITH(format_registry_cost(root), Contains("seed9.json") && Contains("registry"));
  fs::remove_all(root);
}
