#pragma once
// Atomic whole-file writes: readers see either the old content or the new, never a torn file.
#include <filesystem>
#include <string_view>

namespace nlapp {

/// Writes `bytes` to `path` atomically: creates missing parent directories, writes
/// `<path>.tmp.<pid>`, fsyncs it, renames it over `path` and fsyncs the directory.
/// Throws std::runtime_error naming the path and the errno text on any failure (the temp file is
/// removed in that case).
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

/// The temp-file name write_file_atomic uses for `path` in this process: `<path>.tmp.<pid>`.
std::filesystem::path atomic_temp_path(const std::filesystem::path& path);

}  // namespace nlapp
