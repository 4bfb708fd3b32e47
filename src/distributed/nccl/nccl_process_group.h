#pragma once
// NcclProcessGroup: ProcessGroup over NCCL for buffers in CUDA device memory (every span passed to its
// collectives must point to memory of this rank's device). Built only where CMake finds the CUDA toolkit
// and NCCL (NORMLAB_HAS_NCCL). Bootstrapped over another group (normally MPI): rank 0's ncclUniqueId is
// broadcast over it, then every rank calls ncclCommInitRank (../shared/docs/dist-gpu.md §1.3).
// NCCL refuses two ranks on one GPU ("Duplicate GPU detected"), so one GPU allows one rank.
#include <memory>

#include "distributed/process_group.h"

namespace nl::dist {

class NcclProcessGroup final : public ProcessGroup {
 public:
  /// Number of CUDA devices usable here; 0 when there is no driver or no GPU (never throws).
  static int device_count();
  /// Joins the NCCL communicator of `bootstrap`'s ranks on CUDA device `device` (-1: rank modulo the
  /// device count). Throws CommError when there is no GPU or NCCL fails (naming the NCCL error).
  explicit NcclProcessGroup(ProcessGroup& bootstrap, int device = -1);
  ~NcclProcessGroup() override;
  NcclProcessGroup(const NcclProcessGroup&) = delete;
  NcclProcessGroup& operator=(const NcclProcessGroup&) = delete;

  int rank() const override;
  int world_size() const override;
  std::string backend() const override { return "nccl"; }
  /// The CUDA device this rank uses.
  int device() const;
  void barrier() override;
  [[noreturn]] void abort(const std::string& why, int exit_code = 1) override;

 protected:
  void all_reduce_raw(void* buf, int64_t n, ElemType t, ReduceOp op) override;
  void broadcast_raw(void* buf, int64_t n, ElemType t, int root) override;
  void all_gather_raw(const void* in, void* out, int64_t n, ElemType t) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ProcessGroup& bootstrap_;
};

}  // namespace nl::dist
