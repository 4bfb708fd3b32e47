#pragma once
// The results registry: one small JSON record per finished run, kept in the repository, so that tables
// and verdicts can be rebuilt (`normlab report`) and a reproduction reuses what already ran:
//   <root>/<group>/<column>/<variant>/seed<N>.json
// group: a paper ("xu2019", "powernorm", "ni2024") or a task's own reproduction ("mnist"); column: the
// paper's column or the task's config ("mt", "rt", "one-epoch"); variant: the norm. A record is the run's
// results.json (metrics, the full resolved settings, precision, environment: commit and CPU, updates,
// wall times, curves) plus its key and status ("done" or "diverged").
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace nlapp {

/// Where one run's record lives.
struct RegistryKey {
  std::string group, column, variant;
  int seed = 1;
  /// "<group>/<column>/<variant>/seed<N>.json"; throws std::invalid_argument when a part is empty or
  /// holds '/', '\\' or "..".
  std::string relative_path() const;
};

/// The record of a run from its results.json (`result`): the result plus "registry": {group, column,
/// variant, seed} and "status": "diverged" when result["diverged"] is true, else "done".
nlohmann::json make_registry_record(const nlohmann::json& result, const RegistryKey& key);

/// The record of `key` under `root`, or null when the file does not exist. Throws std::runtime_error
/// naming the file when it exists but is not a JSON object with "settings", or is a finished ("done") run
/// whose "test" metrics or "best_valid" are not numbers (a damaged record must be
/// repaired or deleted, not silently retrained over).
nlohmann::json read_registry_record(const std::filesystem::path& root, const RegistryKey& key);

/// The most seeds `reproduce --seeds` takes: a registry record of a higher seed was not written by it.
inline constexpr int kMaxSeeds = 100;

/// The highest seed of any record under <root>/<group> (file names seed<N>.json, N up to kMaxSeeds: a
/// higher one was not written by `reproduce`), and at least `minimum`: how many seeds a report reads, so that
/// a campaign run with more seeds than the default is counted.
int recorded_seeds(const std::filesystem::path& root, const std::string& group, int minimum);

/// Writes the record atomically (temporary file + rename), creating folders. Returns the path.
std::filesystem::path write_registry_record(const std::filesystem::path& root, const RegistryKey& key,
                                            const nlohmann::json& record);

}  // namespace nlapp
