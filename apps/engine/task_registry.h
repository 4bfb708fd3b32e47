#pragma once
// The one registry of tasks: name → factory. Built-in tasks are added by an explicit list in
// apps/tasks/builtin.cpp (static registrar objects in a static library would be dropped by the linker).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/task.h"

namespace nlapp {

/// A registered task: its name, one-line description and factory.
struct TaskEntry {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Task>()> make;
};

/// All tasks, in registration order.
const std::vector<TaskEntry>& task_registry();
/// The names of all tasks.
std::vector<std::string> task_names();
/// A new instance of task `name`; throws std::invalid_argument listing the known tasks otherwise.
std::unique_ptr<Task> make_task(const std::string& name);

}  // namespace nlapp
