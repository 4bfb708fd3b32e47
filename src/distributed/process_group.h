#pragma once
// ProcessGroup: the collectives of data-parallel training (torch.distributed's ProcessGroup, reduced to
// what normlab uses): rank, world size, all-reduce (sum or average, in place), broadcast, all-gather and
// barrier over float32/float64 buffers (plus raw bytes for broadcast). Implementations: MpiProcessGroup
// (Open MPI / any MPI, CPU buffers; built where CMake finds MPI), NcclProcessGroup (CUDA buffers; built
// where CUDA and NCCL are found) and LocalProcessGroup (one process, no communication).
// This layer sits beside src/optim: nothing under src/ depends on it.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace nl::dist {

/// How all_reduce combines the ranks' buffers.
enum class ReduceOp {
  Sum,      ///< element-wise sum over ranks
  Average,  ///< the sum divided by world_size() (one correctly rounded division per element)
};

/// Element types the collectives move.
enum class ElemType { Float32, Float64, Byte };
/// Size of one element of `t` in bytes.
size_t elem_size(ElemType t);

/// Thrown when a collective fails (a peer died, the transport reported an error); what() names the
/// operation, the rank and the fix.
struct CommError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A group of `world_size()` processes that call the same collectives in the same order (see the file
/// comment). Every collective blocks until this rank's part is complete and throws CommError on failure.
/// Buffers of length 0 are allowed (the call still synchronises nothing and returns).
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  /// This process's index in [0, world_size()).
  virtual int rank() const = 0;
  /// Number of processes in the group (>= 1).
  virtual int world_size() const = 0;
  /// Backend name for logs ("mpi", "nccl", "local").
  virtual std::string backend() const = 0;

  /// In place: every rank's `buf` becomes the element-wise sum (or average) over ranks. All ranks pass
  /// the same length; the result is identical on every rank.
  void all_reduce(std::span<float> buf, ReduceOp op = ReduceOp::Sum);
  void all_reduce(std::span<double> buf, ReduceOp op = ReduceOp::Sum);
  /// Every rank's `buf` becomes root's. Throws std::invalid_argument for a root outside [0, world).
  void broadcast(std::span<float> buf, int root = 0);
  void broadcast(std::span<double> buf, int root = 0);
  void broadcast(std::span<std::byte> buf, int root = 0);
  /// out[r·n, (r+1)·n) = rank r's `in` (n = in.size()); out must hold world_size()·n elements
  /// (std::invalid_argument otherwise).
  void all_gather(std::span<const float> in, std::span<float> out);
  void all_gather(std::span<const double> in, std::span<double> out);
  /// Returns once every rank has called barrier().
  virtual void barrier() = 0;
  /// Ends every process of the group now (a rank that cannot go on must not leave the others waiting):
  /// prints `why` to stderr, naming this rank, and never returns.
  [[noreturn]] virtual void abort(const std::string& why, int exit_code = 1) = 0;

 protected:
  /// In-place sum or average over ranks of n elements of type t (Byte is never passed).
  virtual void all_reduce_raw(void* buf, int64_t n, ElemType t, ReduceOp op) = 0;
  /// Divides n host elements of type t by world_size() (how host-memory groups average after a sum).
  void divide_by_world(void* buf, int64_t n, ElemType t) const;
  virtual void broadcast_raw(void* buf, int64_t n, ElemType t, int root) = 0;
  virtual void all_gather_raw(const void* in, void* out, int64_t n, ElemType t) = 0;

 private:
  void check_root(int root) const;
};

/// A group of one process: every collective is a copy or nothing. What a non-distributed run and the
/// tests without MPI use.
class LocalProcessGroup final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  std::string backend() const override { return "local"; }
  void barrier() override {}
  [[noreturn]] void abort(const std::string& why, int exit_code = 1) override;

 protected:
  void all_reduce_raw(void*, int64_t, ElemType, ReduceOp) override {}
  void broadcast_raw(void*, int64_t, ElemType, int) override {}
  void all_gather_raw(const void* in, void* out, int64_t n, ElemType t) override;
};

}  // namespace nl::dist
