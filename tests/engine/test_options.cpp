// Settings schema: strict parsing, ranges stated in words, config files checked key by key.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/options.h"

using namespace nlapp;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {
OptionSchema schema() {
  return OptionSchema({option("max_update", OptKind::Int, 0, "updates", 0, 1e6),
                       option("lr", OptKind::Float, 1e-3, "lr", 0, 10, true),
                       choice_option("norm", "layernorm", {"layernorm", "none"}, "norm"),
                       option("out", OptKind::String, "runs", "folder"),
                       option("threads", OptKind::IntList, json::array({1}), "threads", 1, 256)});
}
}  // namespace

TEST_CASE("options: flags parse strictly and state the allowed range in words", "[engine][options]") {
  OptionSchema s = schema();
  const OptionSpec& n = *s.find("max_update");
  const OptionSpec& lr = *s.find("lr");
  CHECK(parse_flag_value(n, "12") == 12);
  CHECK_THROWS_WITH(parse_flag_value(n, "-5"), Contains("--max-update must be a whole number from 0 to 1000000 (got '-5')"));
  CHECK_THROWS_WITH(parse_flag_value(n, "12x"), Contains("got '12x'"));
  CHECK_THROWS_WITH(parse_flag_value(n, "99999999999999999999999"), Contains("whole number"));
  CHECK(parse_flag_value(lr, "2e-4").get<double>() == Approx(2e-4));
  for (const char* bad : {"inf", "nan", "0", "-1", "1e999", "11", ""})
    CHECK_THROWS_WITH(parse_flag_value(lr, bad), Contains("--lr must be a finite number greater than 0 and at most 10") &&
                                                     Contains(std::string("(got '") + bad + "')"));
  CHECK_THROWS_WITH(parse_flag_value(*s.find("norm"), "batchnorm"), Contains("one of: layernorm, none"));
  CHECK_THROWS_WITH(parse_flag_value(*s.find("out"), ""), Contains("--out must be a non-empty text"));
  CHECK(parse_flag_value(*s.find("threads"), "1,2") == json::array({1, 2}));
  CHECK_THROWS(parse_flag_value(*s.find("threads"), "1,0"));
  CHECK_THROWS(parse_flag_value(*s.find("threads"), "1,"));
  // Whole numbers compared exactly: 2^53 + 1 rounded onto the bound 2^53 as a double, passed, and came back
  // as 2^53.
  const OptionSchema seeds({option("seed", OptKind::Int, 1, "seed", 0, 9007199254740992.0)});
  const OptionSpec& seed = *seeds.find("seed");
  CHECK(parse_flag_value(seed, "9007199254740992") == 9007199254740992LL);
  CHECK_THROWS_WITH(parse_flag_value(seed, "9007199254740993"), Contains("got '9007199254740993'"));
  CHECK_THROWS_WITH(seeds.check_config(json{{"seed", 9007199254740993ULL}}, "config"), Contains("seed"));
  CHECK(seeds.check_config(json{{"seed", 5.0}}, "config")["seed"] == 5);
}

TEST_CASE("options: config files are checked key by key, flags override them", "[engine][options]") {
  OptionSchema s = schema();
  CHECK_THROWS_WITH(s.check_config({{"max_updates", 5}}, "cfg.json"),
                    Contains("cfg.json: unknown setting 'max_updates'") && Contains("did you mean 'max_update'"));
  CHECK_THROWS_WITH(s.check_config({{"lr", "fast"}}, "cfg.json"), Contains("cfg.json: --lr must be"));
  CHECK_THROWS_WITH(s.check_config({{"max_update", 1.5}}, "cfg.json"), Contains("whole number"));
  CHECK_THROWS(s.check_config(json::array(), "cfg.json"));
  json file = s.check_config({{"task", "mnist"}, {"max_update", 5}, {"lr", 0.5}}, "cfg.json");
  json r = s.resolve(file, {{"lr", "0.25"}});
  CHECK(r["max_update"] == 5);
  CHECK(r["lr"].get<double>() == 0.25);
  CHECK(r["norm"] == "layernorm");
  CHECK(describe_range(*s.find("max_update")) == "a whole number from 0 to 1000000");
  CHECK(flag_of("validate_interval_updates") == "--validate-interval-updates");
}

TEST_CASE("options: a --config that is not valid JSON or is a folder says so, naming the path", "[engine][options]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("normlab-options-config-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "folder.json");
  const std::string bad = (dir / "bad.json").string();
  std::ofstream(bad) << "{\"lr\": 0.1,\n";
  CHECK_THROWS_WITH(read_json_file(bad), Contains(bad + " is not valid JSON (line 2, column 1: syntax error") &&
                                             !Contains("json.exception"));
  CHECK_THROWS_WITH(find_config("mnist", dir.string()), Contains(dir.string() + " is a folder, not a config file"));
  CHECK_THROWS_WITH(find_config("mnist", (dir / "folder.json").string()), Contains("is a folder, not a config file"));
  CHECK_THROWS_WITH(read_json_file(dir.string()), Contains(dir.string() + " is a folder, not a config file"));
  CHECK_THROWS_WITH(find_config("mnist", (dir / "absent.json").string()), Contains("absent.json' not found"));
  fs::remove_all(dir);
}
