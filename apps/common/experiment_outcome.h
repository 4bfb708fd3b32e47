#pragma once
// The end of every `normlab reproduce ...` command: what the experiment's tables say, what was written,
// and an error exit when a run failed.
#include <filesystem>
#include <vector>

#include "engine/experiment.h"

namespace nlapp {

/// On the process that reports (reports_here: every process but the ranks > 0 of a --distributed
/// experiment, which return at once): prints `out`/results.md (the tables the command's on_update wrote) and
/// written_listing(out), then throws std::runtime_error(failed_runs_error(records)) when a run failed, so the
/// command exits non-zero after its tables are written.
void finish_experiment(const std::filesystem::path& out, const std::vector<RunRecord>& records);

}  // namespace nlapp
