#pragma once
// Where tests find the real data sets: $NORMLAB_DATA_ROOT if set, else ../shared/data beside the
// checkout. Tests that need a data set call SKIP_IF_MISSING so a machine without it skips cleanly.
#include <cstdlib>
#include <filesystem>
#include <string>

namespace nltest {
inline std::filesystem::path data_root() {
  if (const char* e = std::getenv("NORMLAB_DATA_ROOT")) return e;
  return NORMLAB_SHARED_DATA;
}
inline std::filesystem::path data_path(const std::string& rel) { return data_root() / rel; }
}  // namespace nltest

/// Skips the current Catch2 test (with a message) when `path` does not exist.
#define NL_SKIP_IF_MISSING(path)                                                        \
  do {                                                                                  \
    if (!std::filesystem::exists(path)) {                                               \
      WARN("skipped: data not found at " << (path).string());                          \
      return;                                                                           \
    }                                                                                   \
  } while (0)
