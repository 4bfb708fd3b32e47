#pragma once
// MpiProcessGroup: ProcessGroup over MPI (Open MPI from Debian's libopenmpi-dev; only the standard MPI-3
// API is used, so MPICH works too). Built only where CMake finds MPI (NORMLAB_HAS_MPI). Launch the ranks
// with mpirun (docs/distributed.md).
//
// Every collective is issued non-blocking (MPI_Iallreduce, MPI_Ibcast, MPI_Iallgather, MPI_Ibarrier) and
// polled: a rank spins briefly, then sleeps 50 µs between polls (so oversubscribed ranks leave the cores
// to the ranks that compute), and when a collective has not completed within the timeout (a peer died
// without mpirun noticing, or hangs) it prints which operation waited how long and aborts the whole job
// with MPI_Abort instead of hanging.
#include <memory>

#include "distributed/process_group.h"

namespace nl::dist {

class MpiProcessGroup final : public ProcessGroup {
 public:
  /// Initialises MPI if nobody has (MPI_Init_thread, MPI_THREAD_FUNNELED) and works on a duplicate of
  /// MPI_COMM_WORLD. timeout_s > 0: a collective that has not completed after that many seconds aborts
  /// the job; 0 waits forever. Throws CommError when MPI cannot start (naming the cause and the fix).
  explicit MpiProcessGroup(double timeout_s = 600);
  /// Frees the communicator and finalises MPI if this object initialised it.
  ~MpiProcessGroup() override;
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  int rank() const override;
  int world_size() const override;
  std::string backend() const override { return "mpi"; }
  void barrier() override;
  [[noreturn]] void abort(const std::string& why, int exit_code = 1) override;
  /// Seconds a collective may take before the job is aborted (0: no limit).
  void set_timeout(double seconds) { timeout_s_ = seconds; }
  double timeout() const { return timeout_s_; }

 protected:
  void all_reduce_raw(void* buf, int64_t n, ElemType t, ReduceOp op) override;
  void broadcast_raw(void* buf, int64_t n, ElemType t, int root) override;
  void all_gather_raw(const void* in, void* out, int64_t n, ElemType t) override;

 private:
  /// Polls the MPI_Request at `request` until done; aborts the job past the timeout.
  void wait(void* request, const char* op);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  double timeout_s_;
};

}  // namespace nl::dist
