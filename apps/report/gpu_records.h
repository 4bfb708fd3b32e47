#pragma once
// GPU check records in the repository: one folder per device session under <registry>/gpu/ (a sub-folder
// for an earlier check of the same session, e.g. before-fix/), holding what scripts/gpu-check.sh wrote:
// summary.md, cuda-tests.log, op-check.json, the two training runs' metrics (train-cpu-metrics.jsonl,
// train-cuda-metrics.jsonl) and the bench results (bench-transformer.json, bench-transformer-bf16.json).
// `normlab report` turns them into the table of docs/cuda.md, so its GPU figures are generated.
#include <filesystem>
#include <string>

namespace nlapp {

/// A markdown table, one row per folder under `dir` (recursively, sorted) that holds a summary.md: the
/// folder, the GPU and the commit (summary.md's "machine" and title lines), the CUDA tests' outcome (the
/// last line of cuda-tests.log), the op check (rows, failed), the worst relative difference between the cpu
/// and cuda training losses logged at the same updates, and the median ms per step of
/// `bench transformer --device cuda` (normlab float32 against PyTorch float32, normlab bfloat16 against
/// PyTorch autocast) where those records exist ("—" where a file is missing). "no records" when there is
/// none. Throws std::runtime_error naming a file that cannot be read as the record it should be.
std::string format_gpu_check_records(const std::filesystem::path& dir);

/// A markdown table, one row per `bench-*.json` under `dir` (recursively, sorted by path; gpu-check's own
/// bench-transformer*.json and any `normlab --device cuda bench ... --json` record put there): the device,
/// the model (task, d_model, layers, batch), the precision, normlab's and PyTorch's ms per step (median and
/// min–max over all timed steps), the ratio of the medians, normlab's median over PyTorch's fastest step
/// (the ratio least favourable to normlab), and normlab float32's median in the same rounds of a --bf16 run.
/// Throws std::runtime_error naming a file that is not a bench record.
std::string format_gpu_bench_records(const std::filesystem::path& dir);

}  // namespace nlapp
