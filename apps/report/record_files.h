#pragma once
// The record files of a registry folder: every regular file under a folder (recursively) whose name
// passes a test, sorted by path, so that tables built from them are in a stable order.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace nlapp {

/// Regular files under `dir` (recursively) whose file name passes `keep`, sorted by path; empty when
/// `dir` is not a folder. Throws std::filesystem::filesystem_error when a folder under it cannot be read.
std::vector<std::filesystem::path> record_files(const std::filesystem::path& dir,
                                                const std::function<bool(const std::string& name)>& keep);

/// keep-test for record_files: names starting with `prefix` and ending with `suffix`.
std::function<bool(const std::string&)> name_matches(std::string prefix, std::string suffix);

}  // namespace nlapp
