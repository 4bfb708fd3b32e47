#pragma once
// The trainer's own settings (optimizer, schedule, run length, validation, checkpoints, threads):
// keys, types, defaults, ranges and help, in one list (fairseq's names).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/options.h"

namespace nlapp {

/// The trainer's settings; a task adds its own (Task::settings) and may change these defaults.
std::vector<OptionSpec> trainer_settings();

/// The learning-rate schedule of resolved settings in words, for report headers: "fixed lr",
/// "lr × 0.5 every 20 epochs" (step), or "<name> schedule, N warm-up updates".
std::string schedule_summary(const nlohmann::json& settings);

}  // namespace nlapp
