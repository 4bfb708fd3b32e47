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

/// Runs `normlab ARGS` (a shell word list), returns (exit status, stdout + stderr). A process killed by
/// signal S gives 128 + S, as a shell reports it. `env` ("NAME=value ...") is set for that process only;
/// `program` replaces the normlab binary.
inline std::pair<int, std::string> run_cli(const std::string& args, const std::string& env = "",
                                           const std::string& program = NORMLAB_BINARY) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("normlab-cli-" + std::to_string(::getpid()) + ".txt")).string();
  const int rc = std::system((env + " " + program + " " + args + " > " + out + " 2>&1").c_str());
  std::ifstream f(out);
  std::string text((std::istreambuf_iterator<char>(f)), {});
  std::filesystem::remove(out);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), text};
}

/// A fresh path under the system temp folder, "normlab-<name>-<pid>", removed first if it exists (not
/// created): each e2e test's own scratch folder.
inline std::filesystem::path temp_dir(const std::string& name) {
  std::filesystem::path p = std::filesystem::temp_directory_path() / ("normlab-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p;
}

}  // namespace nltest
