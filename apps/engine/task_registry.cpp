#include "engine/task_registry.h"

#include <stdexcept>

#include "tasks/builtin.h"

namespace nlapp {

const std::vector<TaskEntry>& task_registry() {
  static const std::vector<TaskEntry> reg = builtin_tasks();
  return reg;
}

std::vector<std::string> task_names() {
  std::vector<std::string> n;
  for (const auto& e : task_registry()) n.push_back(e.name);
  return n;
}

std::unique_ptr<Task> make_task(const std::string& name) {
  for (const auto& e : task_registry())
    if (e.name == name) return e.make();
  std::string all;
  for (const auto& e : task_registry()) all += (all.empty() ? "" : ", ") + e.name;
  throw std::invalid_argument("unknown task '" + name + "'; tasks: " + all);
}

}  // namespace nlapp
