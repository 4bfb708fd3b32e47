#pragma once
// The closing line of a command that writes a folder of outputs: what is really there.
#include <filesystem>
#include <string>

namespace nlapp {

/// "written: OUT/: figure1.svg, results.json, results.md, runs/" — the entries of `out` (files, then
/// folders with a trailing '/'; hidden ones left out), sorted, so a command never names a file it did not
/// write. "written: nothing in OUT" when the folder is missing or empty.
std::string written_listing(const std::filesystem::path& out);

}  // namespace nlapp
