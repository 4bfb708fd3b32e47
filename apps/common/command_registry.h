#pragma once
// Subcommand registry for the `normlab` binary. Each file in apps/commands/ defines one top-level
// subcommand and registers it with a static `CommandRegistrar`, so adding a command never edits
// main.cpp. A command's setup function adds its CLI11 subcommand and callback to the parent app.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace nlapp {

/// One top-level subcommand: `setup(app)` creates `app.add_subcommand(name, ...)` and its options.
struct CommandSpec {
  std::string name;
  int order = 100;  ///< position in `normlab --help` (lower first)
  std::function<void(CLI::App&)> setup;
};

/// All registered subcommands (filled during static initialisation).
std::vector<CommandSpec>& command_registry();

/// Registers a subcommand at static-initialisation time: `static CommandRegistrar r{{"train", 10, setup}};`
struct CommandRegistrar {
  explicit CommandRegistrar(CommandSpec spec) { command_registry().push_back(std::move(spec)); }
};

}  // namespace nlapp
