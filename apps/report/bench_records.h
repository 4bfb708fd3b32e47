#pragma once
// Benchmark records in the repository: `normlab bench ... [--bf16] --json <registry>/bench/{bf16,fp32}-<config>-*.json`
// writes one; `normlab report` turns them into the speed tables of docs/mixed-precision.md, docs/bench.md and
// README.md, so the speed figures there are generated from committed measurements (with the CPU and commit
// they came from).
#include <filesystem>
#include <string>
#include <vector>

namespace nlapp {

/// A markdown table, one row per `bf16-*.json` file of `dir` (sorted by name): config, CPU model and
/// commit (the record's environment), median step ms of normlab bfloat16, normlab float32 and PyTorch under
/// torch.autocast(bfloat16), bf16 / PyTorch and float32 / bf16, peak RSS MiB of the three, and the GFLOP/s
/// of normlab's bf16 products inside the GEMM calls and the ms of its step spent in them (step GFLOP over that
/// rate: the floor that faster non-product kernels cannot go below). "no records" when there is none. Throws
/// std::runtime_error naming the file for a record that is not a `bench --bf16 --json` result.
std::string format_bf16_bench_records(const std::filesystem::path& dir);

/// A markdown table, one row per thread count of every `fp32-*.json` file of `dir` (`normlab bench <task>
/// --json`, float32 against PyTorch float32; sorted by file name) whose config is one of `configs` (the
/// PyTorch twin's `config`, e.g. "cls", or else the record's task, e.g. "mnist"): threads, CPU model and
/// commit, normlab's and PyTorch's median step ms (min–max), the time ratio normlab / PyTorch of the medians
/// with each alternating round's ratio, the CPU-time ratio, the GFLOP/s of normlab's products inside the GEMM
/// calls and both peak RSS in MiB. "no records" when none matches. Throws std::runtime_error naming the file
/// for a record without PyTorch's runs or not written by `bench --json`.
std::string format_float32_bench_records(const std::filesystem::path& dir, const std::vector<std::string>& configs);

}  // namespace nlapp
