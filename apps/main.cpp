// normlab: the command-line front end. Subcommands live in apps/commands/ and register themselves.
// Any std::exception that escapes a command is printed as "error: ..." with exit status 1.
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "backends/runtime.h"
#include "common/cli_common.h"
#include "common/cli_errors.h"
#include "common/command_registry.h"
#include "version.h"

int main(int argc, char** argv) {
  nl::ensure_blas_kernels(argv);  // CPUs newer than OpenBLAS's tables get its fast kernels, not Prescott's
  CLI::App app{"normlab: a from-scratch C++ deep-learning framework for research on normalization layers"};
  app.set_version_flag("--version",
                       std::string("normlab ") + nl::version() + " (OpenBLAS kernels: " + nl::blas_kernel_name() + ")");
  app.require_subcommand(1);
  std::string device = "cpu";
  nlapp::add_device_option(app, &device);
  app.parse_complete_callback([&device] { nlapp::check_device_option(device); });
  auto& cmds = nlapp::command_registry();
  std::stable_sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (auto& c : cmds) c.setup(app);
  nlapp::strict_leaf_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
    const std::string words = nlapp::explain_parse_error(app, e, std::vector<std::string>(argv + 1, argv + argc));
    if (words.empty()) return app.exit(e);
    std::cerr << "error: " << words << "\n";
    return e.get_exit_code();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
