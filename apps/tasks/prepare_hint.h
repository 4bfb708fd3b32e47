#pragma once
// The `normlab data prepare` command a task's error proposes when --data is not a prepared folder. A folder
// that holds other files (the raw data set itself, another task's data) is never proposed as the --out:
// prepare would write into it.
#include <filesystem>
#include <string>

namespace nlapp {

/// Where a new prepared copy of data set `name` should go when `dir` is not one: data-bin/<name>, or
/// data-bin/<name>-prepared when that is `dir` itself.
std::filesystem::path fresh_prepare_out(const std::filesystem::path& dir, const std::string& name);

/// The fix for a --data `dir` that holds the raw files of data set `name`: "'<dir>' holds the raw <name> files,
/// not <what>: prepare them into a folder of their own with `normlab data prepare <name> --data <dir> --out
/// <fresh_prepare_out>`, then pass --data <that folder>".
std::string raw_data_hint(const std::filesystem::path& dir, const std::string& name, const std::string& what);

}  // namespace nlapp
