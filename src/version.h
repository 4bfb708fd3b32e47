#pragma once
// normlab library version (placeholder translation unit so the `normlab` target has a source
// before the tensor core lands).
namespace nl {
/// The library version string, e.g. "0.1.0".
const char* version();
}  // namespace nl
