#include "distributed/mpi/mpi_process_group.h"

// The C API only (Open MPI's deprecated C++ bindings do not compile warning-free).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

namespace nl::dist {

struct MpiProcessGroup::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, world = 1;
  bool finalize = false;  ///< this object called MPI_Init_thread

  std::string who() const { return "rank " + std::to_string(rank) + " of " + std::to_string(world); }

  // Throws CommError naming the operation when an MPI call failed (the communicator returns errors).
  void check(int rc, const char* op) const {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw CommError(who() + ": MPI " + op + " failed: " + std::string(msg, (size_t)len) +
                    " (a peer rank probably died: see the other ranks' messages; resume with --resume)");
  }
};

namespace {
MPI_Datatype mpi_type(ElemType t) {
  return t == ElemType::Float32 ? MPI_FLOAT : t == ElemType::Float64 ? MPI_DOUBLE : MPI_BYTE;
}
constexpr int64_t kChunk = int64_t(1) << 30;  // MPI counts are int: larger buffers go in chunks
}  // namespace

MpiProcessGroup::MpiProcessGroup(double timeout_s) : impl_(std::make_unique<Impl>()), timeout_s_(timeout_s) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw CommError("MPI_Init_thread failed: start the ranks with mpirun (docs/distributed.md); as root in a "
                      "container set OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
    impl_->finalize = true;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &impl_->comm);
  MPI_Comm_set_errhandler(impl_->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(impl_->comm, &impl_->rank);
  MPI_Comm_size(impl_->comm, &impl_->world);
}

MpiProcessGroup::~MpiProcessGroup() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (impl_->comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->comm);
  if (impl_->finalize) MPI_Finalize();
}

int MpiProcessGroup::rank() const { return impl_->rank; }
int MpiProcessGroup::world_size() const { return impl_->world; }

void MpiProcessGroup::wait(void* request, const char* op) {
  MPI_Request& req = *static_cast<MPI_Request*>(request);
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  for (int polls = 0;; ++polls) {
    int done = 0;
    impl_->check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), op);
    if (done) return;
    if (polls < 2000) continue;  // short collectives complete while spinning
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (timeout_s_ > 0 && polls % 256 == 0) {
      const double waited = std::chrono::duration<double>(clock::now() - t0).count();
      if (waited > timeout_s_) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s has waited %.0f s for the other ranks", op, waited);
        abort(std::string(buf) + ": a rank has died or hangs (see the messages of the other ranks and of mpirun). "
              "Aborting every rank; continue from the last checkpoint with --resume, or raise --dist-timeout if "
              "one step legitimately takes longer");
      }
    }
  }
}

void MpiProcessGroup::all_reduce_raw(void* buf, int64_t n, ElemType t, ReduceOp op) {
  char* p = static_cast<char*>(buf);
  for (int64_t off = 0; off < n; off += kChunk) {
    const int c = (int)std::min(kChunk, n - off);
    MPI_Request req;
    impl_->check(MPI_Iallreduce(MPI_IN_PLACE, p + off * (int64_t)elem_size(t), c, mpi_type(t), MPI_SUM, impl_->comm, &req),
                 "all_reduce");
    wait(&req, "all_reduce");
  }
  if (op == ReduceOp::Average) divide_by_world(buf, n, t);
}

void MpiProcessGroup::broadcast_raw(void* buf, int64_t n, ElemType t, int root) {
  char* p = static_cast<char*>(buf);
  for (int64_t off = 0; off < n; off += kChunk) {
    const int c = (int)std::min(kChunk, n - off);
    MPI_Request req;
    impl_->check(MPI_Ibcast(p + off * (int64_t)elem_size(t), c, mpi_type(t), root, impl_->comm, &req), "broadcast");
    wait(&req, "broadcast");
  }
}

void MpiProcessGroup::all_gather_raw(const void* in, void* out, int64_t n, ElemType t) {
  if (n > kChunk)
    throw std::invalid_argument("all_gather: " + std::to_string(n) + " elements per rank exceed MPI's int count; "
                                "gather in pieces of at most 2^30");
  MPI_Request req;
  impl_->check(MPI_Iallgather(in, (int)n, mpi_type(t), out, (int)n, mpi_type(t), impl_->comm, &req), "all_gather");
  wait(&req, "all_gather");
}

void MpiProcessGroup::barrier() {
  MPI_Request req;
  impl_->check(MPI_Ibarrier(impl_->comm, &req), "barrier");
  wait(&req, "barrier");
}

void MpiProcessGroup::abort(const std::string& why, int exit_code) {
  std::cerr << "normlab " << impl_->who() << ": " << why << std::endl;
  MPI_Abort(impl_->comm == MPI_COMM_NULL ? MPI_COMM_WORLD : impl_->comm, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return
}

}  // namespace nl::dist
