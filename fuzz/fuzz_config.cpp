// libFuzzer target: JSON run configs (apps/engine/options.cpp: read_json_file, OptionSchema::check_config,
// resolve) against the trainer's real schema. Contract checked: any input either is accepted or throws
// std::invalid_argument / std::runtime_error; an accepted config resolves to settings that pass
// check_value again (every value typed and in range).
#include <cstdlib>
#include <stdexcept>

#include "engine/options.h"
#include "engine/trainer_settings.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlapp::OptionSchema schema(nlapp::trainer_settings());
  static nlfuzz::ScratchFile file("config.json");
  try {
    const nlohmann::json j = nlapp::read_json_file(file.write(std::string(reinterpret_cast<const char*>(data), size)).string());
    const nlohmann::json settings = schema.resolve(schema.check_config(j, "fuzz.json"), {});
    for (const auto& s : schema.specs()) nlapp::check_value(s, settings.at(s.key), "resolved");
  } catch (const std::invalid_argument&) {
  } catch (const std::runtime_error&) {
  }
  return 0;
}
