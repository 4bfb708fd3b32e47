#pragma once
// The trainer's own settings (optimizer, schedule, run length, validation, checkpoints, threads):
// keys, types, defaults, ranges and help, in one list (fairseq's names).
#include <vector>

#include "engine/options.h"

namespace nlapp {

/// The trainer's settings; a task adds its own (Task::settings) and may change these defaults.
std::vector<OptionSpec> trainer_settings();

}  // namespace nlapp
