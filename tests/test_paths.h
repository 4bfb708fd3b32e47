#pragma once
// Where tests find the real data sets: $NORMLAB_DATA_ROOT if set, else ../shared/data beside the
// checkout. A test that needs a data set calls NL_SKIP_IF_MISSING(path): when the path is absent it
// prints the marker kSkipMarker and returns, and ctest (SKIP_REGULAR_EXPRESSION, tests/CMakeLists.txt)
// reports the test as Skipped, never as passed.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

namespace nltest {
/// Printed by NL_SKIP_IF_MISSING; tests/CMakeLists.txt gives ctest the same string to mark skips.
inline constexpr const char* kSkipMarker = "NORMLAB_SKIP:";

/// Root of the shared data sets: $NORMLAB_DATA_ROOT, else ../shared/data beside the checkout.
inline std::filesystem::path data_root() {
  if (const char* e = std::getenv("NORMLAB_DATA_ROOT")) return e;
  return NORMLAB_SHARED_DATA;
}
/// data_root() / rel.
inline std::filesystem::path data_path(const std::string& rel) { return data_root() / rel; }
}  // namespace nltest

/// Skips the current Catch2 test when `where_` (a path) does not exist: prints "NORMLAB_SKIP: data not found at
/// <path>" on stdout (ctest then reports the test as Skipped) and returns from the test case.
#define NL_SKIP_IF_MISSING(where_)                                                            \
  do {                                                                                        \
    const std::filesystem::path nl_skip_path_ = (where_);                                     \
    if (!std::filesystem::exists(nl_skip_path_)) {                                            \
      std::cout << nltest::kSkipMarker << " data not found at " << nl_skip_path_.string()     \
                << std::endl;                                                                 \
      return;                                                                                 \
    }                                                                                         \
  } while (0)
