#include "distributed/world.h"

#include <memory>
#include <stdexcept>

#ifdef NORMLAB_HAS_MPI
#include "distributed/mpi/mpi_process_group.h"
#endif

namespace nl::dist {

ProcessGroup& world(double timeout_s) {
#ifdef NORMLAB_HAS_MPI
  static std::unique_ptr<MpiProcessGroup> group;  // destroyed (MPI finalised) at exit
  if (!group) group = std::make_unique<MpiProcessGroup>(timeout_s);
  group->set_timeout(timeout_s);
  return *group;
#else
  (void)timeout_s;
  throw std::runtime_error(
      "this normlab was built without MPI, so it cannot train --distributed: install Open MPI "
      "(scripts/install-deps.sh --distributed, i.e. apt-get install libopenmpi-dev openmpi-bin), then reconfigure "
      "and rebuild (cmake -S . -B build && cmake --build build)");
#endif
}

}  // namespace nl::dist
