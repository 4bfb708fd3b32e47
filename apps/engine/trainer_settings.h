#pragma once
// The trainer's own settings (optimizer, schedule, run length, validation, checkpoints, threads):
// keys, types, defaults, ranges and help, in one list (fairseq's names).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/options.h"
#include "tensor/device.h"

namespace nlapp {

/// The trainer's settings; a task adds its own (Task::settings) and may change these defaults.
std::vector<OptionSpec> trainer_settings();

/// The learning-rate schedule of resolved settings in words, for report headers: "fixed lr",
/// "lr × 0.5 every 20 epochs" (step), or "<name> schedule, N warm-up updates".
std::string schedule_summary(const nlohmann::json& settings);

/// The precision of resolved settings: "bfloat16" with --bf16 (mixed precision), else "float32" (as
/// results.json records it).
std::string precision_name(const nlohmann::json& settings);

/// Applies --bf16 / --tf32 of resolved settings before a run on `device`: sets the TF32 switch, and for
/// --bf16 on the cpu throws std::invalid_argument when this build cannot run bfloat16 products (no
/// oneDNN: the message says to install libdnnl-dev and rebuild) and prints one line on stderr, once per
/// process, when the products run in float32 on this CPU (cpu_bf16_products_native() false: no bfloat16
/// instructions, vdpbf16ps slower than float32 FMAs, or forced by the environment; not faster than float32).
/// Throws std::invalid_argument for a bad NORMLAB_BF16_PRODUCTS.
void set_precision(const nlohmann::json& settings, nl::Device device);

/// Why a checkpoint written with settings `old` cannot be resumed with `now`: one line per setting of
/// `schema` that defines the experiment (not `resumable`: run length, threads and output may change) and
/// differs — "--lr: 0.001 in the checkpoint, 0.002 now" — then the fix (and, for --bf16 / --tf32, that a run
/// trains in one precision); "" when they match. A setting `old` lacks (added to normlab after the
/// checkpoint was written) counts as its default.
std::string resume_settings_mismatch(const OptionSchema& schema, const nlohmann::json& old, const nlohmann::json& now);

}  // namespace nlapp
