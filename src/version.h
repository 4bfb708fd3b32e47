#pragma once
// normlab library version (printed by `normlab --version`).
namespace nl {
/// The library version string, e.g. "0.1.0".
const char* version();
}  // namespace nl
