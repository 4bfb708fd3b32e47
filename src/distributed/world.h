#pragma once
// The process group of all ranks of this job (MPI_COMM_WORLD), created once per process.
#include "distributed/process_group.h"

namespace nl::dist {

/// The group of every rank started by mpirun, created on first use (MPI is initialised then and
/// finalised at process exit). `timeout_s` (> 0; 0 = none) bounds each collective (MpiProcessGroup);
/// later calls update it. Started without mpirun it is a group of one. Throws std::runtime_error when
/// normlab was built without MPI, naming the fix (install Open MPI, reconfigure).
ProcessGroup& world(double timeout_s = 600);

}  // namespace nl::dist
