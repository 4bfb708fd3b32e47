#pragma once
// Benchmark records in the repository: `normlab bench ... --bf16 --json <registry>/bench/bf16-<config>.json`
// writes one; `normlab report` turns every such file into the table of docs/mixed-precision.md, so the
// speed figures there are generated from committed measurements (with the CPU and commit they came from).
#include <filesystem>
#include <string>

namespace nlapp {

/// A markdown table, one row per `bf16-*.json` file of `dir` (sorted by name): config, CPU model and
/// commit (the record's environment), median step ms of normlab bfloat16, normlab float32 and PyTorch under
/// torch.autocast(bfloat16), bf16 / PyTorch and float32 / bf16, peak RSS MiB of the three, and the GFLOP/s
/// of normlab's bf16 products inside the GEMM calls and the ms of its step spent in them (step GFLOP over that
/// rate: the floor that faster non-product kernels cannot go below). "no records" when there is none. Throws
/// std::runtime_error naming the file for a record that is not a `bench --bf16 --json` result.
std::string format_bf16_bench_records(const std::filesystem::path& dir);

}  // namespace nlapp
