#pragma once
// The list of built-in tasks (the task registry's contents).
#include <vector>

#include "engine/task_registry.h"

namespace nlapp {

/// Every built-in task, in the order `normlab train --help` lists them.
std::vector<TaskEntry> builtin_tasks();

}  // namespace nlapp
