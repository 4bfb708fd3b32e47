// Tests for apps/common/metrics_log: JSON-lines round trip, flushing, torn last line.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/metrics_log.h"

using namespace nlapp;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& tag) {
  auto d = fs::temp_directory_path() / ("nl_metrics_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST_CASE("metrics log: JSON-lines round trip, one flushed line per record", "[report][metrics]") {
  auto dir = fresh_dir("rt");
  auto path = dir / "run" / "metrics.jsonl";
  {
    MetricsLog log(path, /*append=*/false);
    log.write({{"step", 1}, {"loss", 2.5}, {"norm", "adanorm"}});
    // flushed: visible to a reader while the log is still open
    CHECK(slurp(path) == "{\"loss\":2.5,\"norm\":\"adanorm\",\"step\":1}\n");
    log.write({{"step", 2}, {"loss", std::numeric_limits<double>::quiet_NaN()}});
    log.write({{"step", 3}, {"loss", 0.125}, {"acc", {{"val", 0.98}}}});
    CHECK_THROWS_AS(log.write(json::array({1, 2})), std::invalid_argument);
  }
  auto recs = read_metrics_log(path);
  REQUIRE(recs.size() == 3);
  CHECK(recs[0]["step"] == 1);
  CHECK(recs[0]["loss"].get<double>() == 2.5);
  CHECK(recs[0]["norm"] == "adanorm");
  CHECK(recs[1]["loss"].is_null());  // NaN is written as null
  CHECK(recs[2]["acc"]["val"].get<double>() == 0.98);

  // reopening appends
  {
    MetricsLog log(path);
    log.write({{"step", 4}});
  }
  CHECK(read_metrics_log(path).size() == 4);
  // each line parses on its own with nlohmann
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    CHECK(json::parse(line).is_object());
    ++n;
  }
  CHECK(n == 4);
  fs::remove_all(dir);
}

TEST_CASE("metrics log: torn last line is skipped, corrupt middle line is an error", "[report][metrics]") {
  auto dir = fresh_dir("torn");
  fs::create_directories(dir);
  auto path = dir / "m.jsonl";
  std::ofstream(path) << "{\"step\":1}\n\n{\"step\":2}\n{\"step\":3,\"lo";
  auto recs = read_metrics_log(path);
  REQUIRE(recs.size() == 2);
  CHECK(recs[1]["step"] == 2);

  std::ofstream(path) << "{\"step\":1}\nnot json\n{\"step\":3}\n";
  try {
    read_metrics_log(path);
    FAIL("expected an exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("line 2") != std::string::npos);
  }
  CHECK_THROWS_AS(read_metrics_log(dir / "missing.jsonl"), std::runtime_error);
  CHECK_THROWS_AS(MetricsLog(dir / "m.jsonl" / "x.jsonl"), std::runtime_error);
  fs::remove_all(dir);
}

TEST_CASE("metrics log: truncate_lines keeps the first lines, a missing file stays missing", "[report][metrics]") {
  const fs::path d = fresh_dir("truncate");
  fs::create_directories(d);
  const fs::path p = d / "metrics.jsonl";
  std::ofstream(p) << "{\"update\":10}\n{\"update\":20}\n{\"update\":30}\n";
  CHECK(truncate_lines(p, 2).kept == 2);
  CHECK(slurp(p) == "{\"update\":10}\n{\"update\":20}\n");
  const TruncatedLog fewer = truncate_lines(p, 5);  // fewer lines than asked: unchanged, and says so
  CHECK(fewer.kept == 2);
  CHECK(fewer.damaged.empty());
  CHECK(slurp(p) == "{\"update\":10}\n{\"update\":20}\n");
  truncate_lines(p, 0);
  CHECK(slurp(p).empty());
  truncate_lines(d / "absent.jsonl", 1);
  CHECK_FALSE(fs::exists(d / "absent.jsonl"));
  fs::remove_all(d);
}

TEST_CASE("metrics log: truncate_lines drops damaged lines among those kept and names them", "[report][metrics]") {
  const fs::path d = fresh_dir("truncate_damaged");
  fs::create_directories(d);
  const fs::path p = d / "metrics.jsonl";
  std::ofstream(p) << "{\"update\":10}\n{\"upd\x01\n[1,2]\n{\"update\":30}\n{\"update\":40}\n";
  const TruncatedLog r = truncate_lines(p, 4);
  CHECK(r.kept == 2);
  CHECK(r.damaged == std::vector<int64_t>{2, 3});  // a torn object, and JSON that is not an object
  CHECK(slurp(p) == "{\"update\":10}\n{\"update\":30}\n");
  CHECK(read_metrics_log(p).size() == 2);
  fs::remove_all(d);
}
