#pragma once
// CLI11's parse errors in words: what went wrong and the fix, for the cases where CLI11's own text
// misleads (an unknown command, a global option after the command, a number out of range).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace nlapp {

/// One message for the parse error `e` of `normlab ARGS` (args without the program name), or "" when
/// CLI11's own message is clear. Covers: an unknown command ("unknown command 'trian' (did you mean
/// 'train'?); commands: ..."), a missing command, the global --device given after the command ("give it
/// before the command: normlab --device cuda train ..."), an option the command does not have ("unknown option
/// --epochs for `normlab train mnist`; its options with 'epoch' in their name: --max-epoch, ..."; the nearest
/// name, or the sibling command that has it), and CLI11's range checks ("Value 0 not in range
/// 0.000000 to 1.79e308" becomes "--opt must be a number greater than 0 (got 0)").
std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args);

}  // namespace nlapp
