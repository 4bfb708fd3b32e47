#include "common/command_registry.h"

namespace nlapp {
std::vector<CommandSpec>& command_registry() {
  static std::vector<CommandSpec> registry;
  return registry;
}
}  // namespace nlapp
