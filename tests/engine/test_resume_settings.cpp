// Tests for resume_settings_mismatch (engine/trainer_settings.h): which settings a resume may change.
#include <catch2/catch.hpp>

#include "engine/trainer_settings.h"

using namespace nlapp;
using nlohmann::json;
using Catch::Matchers::Contains;

TEST_CASE("resume settings: experiment settings must match, run length may change", "[engine][resume]") {
  const OptionSchema schema(trainer_settings());
  json old = schema.defaults(), now = schema.defaults();
  CHECK(resume_settings_mismatch(schema, old, now).empty());
  now["max_epoch"] = 40;  // resumable: a longer run continues
  now["threads"] = 2;
  CHECK(resume_settings_mismatch(schema, old, now).empty());
  now["lr"] = 0.123;
  const std::string why = resume_settings_mismatch(schema, old, now);
  CHECK_THAT(why, Contains("--lr: ") && Contains("in the checkpoint, 0.123 now") && Contains("another --out"));
  CHECK_THAT(why, !Contains("one precision"));
  now["lr"] = old["lr"];
  now["bf16"] = true;
  CHECK_THAT(resume_settings_mismatch(schema, old, now), Contains("--bf16") && Contains("one precision"));
  // A setting the checkpoint does not list ran with its default.
  now["bf16"] = false;
  old.erase("bf16");
  CHECK(resume_settings_mismatch(schema, old, now).empty());
}
