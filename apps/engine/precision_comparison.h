#pragma once
// Float32 against bfloat16 (issue 26, docs/mixed-precision.md): the same task reproduction run in both
// precisions, side by side from the results registry — the float32 column "<config>" and the mixed-precision
// column "<config>+bf16" (registry_column) — so that "the results are unchanged in substance" is a table
// generated from records, not a sentence.
#include <string>
#include <vector>

#include "engine/experiment.h"
#include "engine/task_reproduction.h"

namespace nlapp {

/// One markdown table, a row per variant: the test metric (mean ± std over the finished seeds, n) of the
/// float32 and of the bfloat16 records, bf16 − float32 of the means, and each precision's mean training
/// wall time (minutes, results.json train_seconds) and throughput (items/s of the task's unit). A variant
/// with no finished record in a precision shows "not run" there. `inv` names the task (its reported metric
/// and unit); the records are those of task_reproduction_runs for each precision's settings.
std::string format_precision_comparison(const TaskInvocation& inv, const TaskReproduction& what,
                                        const std::vector<RunRecord>& float32, const std::vector<RunRecord>& bf16);

}  // namespace nlapp
