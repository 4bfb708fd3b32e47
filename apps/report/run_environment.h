#pragma once
// Where and with what a run ran, for its results.json and registry record: the normlab commit, the CPU
// (model name and the vector/matrix flags that change which kernels run: results differ in the last
// digits between CPUs) and the thread count.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nlapp {

/// The CPU as /proc/cpuinfo describes it: "model name" of the first processor ("unknown" if unreadable).
std::string cpu_model_name();

/// The flags of /proc/cpuinfo among those that pick kernels (avx2, fma, avx512f, avx512_bf16, amx_bf16,
/// amx_tile), in that order; empty if unreadable.
std::vector<std::string> cpu_kernel_flags();

/// {"commit": nl::build_commit(), "cpu": {"model": ..., "flags": [...], "cores": N}, "threads": threads,
/// "load_average": [1 min, 5 min, 15 min]} (the load when called; absent where getloadavg fails).
nlohmann::json run_environment(int threads);

}  // namespace nlapp
