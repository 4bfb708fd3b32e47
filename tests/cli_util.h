#pragma once
// Runs the `normlab` binary built with the tests and captures what it prints.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace nltest {

/// Runs `normlab ARGS` (a shell word list) with the variables `env` (shell words such as
/// "OMPI_COMM_WORLD_SIZE=2"; "" for none) set, returns (exit status, stdout + stderr). A process killed by
/// signal S gives 128 + S, as a shell reports it.
inline std::pair<int, std::string> run_cli_env(const std::string& env, const std::string& args) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("normlab-cli-" + std::to_string(::getpid()) + ".txt")).string();
  const std::string prefix = env.empty() ? "" : "env " + env + " ";
  const int rc = std::system((prefix + std::string(NORMLAB_BINARY) + " " + args + " > " + out + " 2>&1").c_str());
  std::ifstream f(out);
  std::string text((std::istreambuf_iterator<char>(f)), {});
  std::filesystem::remove(out);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), text};
}

/// Runs `normlab ARGS` (see run_cli_env).
inline std::pair<int, std::string> run_cli(const std::string& args) { return run_cli_env("", args); }

}  // namespace nltest
