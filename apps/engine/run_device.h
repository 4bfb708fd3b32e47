#pragma once
// The device a run trains on: chosen once per process by the global `normlab --device cpu|cuda[:N]`,
// recorded in every run's settings as settings["device"] (resolve_task_settings), and read by the
// Trainer, which moves the model there before building the optimizer and every training batch
// before its forward (to_device). It is not an experiment setting: a run may resume on another
// device, and a finished run is not redone because the device changed (docs/cuda.md).
#include <string>

#include <nlohmann/json.hpp>

#include "engine/task.h"
#include "tensor/device.h"

namespace nlapp {

/// Sets the device of the runs this process starts (main does it after checking `--device`).
void set_run_device(nl::Device d);
/// The device set by set_run_device; cpu until then.
nl::Device run_device();

/// The device a run's settings name: settings["device"] ("cpu", "cuda", "cuda:N"), cpu when the key is
/// absent. Throws std::invalid_argument for a bad name ("unknown device ...") or a device that does
/// not exist ("no CUDA device: ... use --device cpu").
nl::Device settings_device(const nlohmann::json& settings);

/// Moves every tensor batch.tensors() lists to `device` (no copy for those already there).
void to_device(TaskBatch& batch, nl::Device device);

}  // namespace nlapp
