#pragma once
// normlab library version (printed by `normlab --version`).
namespace nl {
/// The library version string, e.g. "0.1.0".
const char* version();
/// The git commit normlab was built from (12 hex digits, "-dirty" when tracked files differed from it;
/// "unknown" outside a git checkout). Generated at build time by cmake/build_info.cmake.
const char* build_commit();
}  // namespace nl
