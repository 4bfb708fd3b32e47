#pragma once
// Where and with what a run ran, for its results.json and registry record: the normlab commit, the CPU
// (model name and the vector/matrix flags that change which kernels run: results differ in the last
// digits between CPUs) and the thread count.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensor/device.h"

namespace nlapp {

/// The CPU as /proc/cpuinfo describes it: "model name" of the first processor ("unknown" if unreadable).
std::string cpu_model_name();

/// The flags of /proc/cpuinfo among those that pick kernels (avx2, fma, avx512f, avx512_bf16, amx_bf16,
/// amx_tile), in that order; empty if unreadable.
std::vector<std::string> cpu_kernel_flags();

/// {"commit": nl::build_commit(), "cpu": {"model": ..., "flags": [...], "cores": N, "family": F, "model_number":
/// M}, "threads": threads, "load_average": [1 min, 5 min, 15 min]} (the load when called; absent where
/// getloadavg fails; family and model_number are /proc/cpuinfo's "cpu family" and "model", absent where it has
/// none: a VM's model name alone, e.g. "Intel(R) Xeon(R) Processor", does not tell an Icelake from an Emerald
/// Rapids, its model number does). For a run on a GPU (`device` not the CPU) also "device": {"name": "cuda:0",
/// "model": nl::device_name(device)}, e.g. "<GPU name> (sm_<XY>, <memory> GiB)"; throws as nl::check_device.
nlohmann::json run_environment(int threads, nl::Device device = nl::Device::cpu());

/// The CPU of a record's environment in one phrase: the model name, then " (family F model M)" when the record
/// has them (records written before they were recorded have the name alone). "?" without a cpu entry.
std::string cpu_label(const nlohmann::json& environment);

/// The machine a record's numbers came from: cpu_label for a CPU run; for a run on another device its model
/// ("<GPU name> (sm_<XY>, <memory> GiB)"), or "cuda (model not recorded; host <cpu_label>)" for records written
/// before the model was recorded. `device` is the record's settings["device"] ("cpu" when absent).
std::string machine_label(const nlohmann::json& environment, const std::string& device);

}  // namespace nlapp
