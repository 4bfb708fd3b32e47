#include "distributed/nccl/nccl_process_group.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>

namespace nl::dist {

struct NcclProcessGroup::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* scratch = nullptr;  ///< one device float for barrier()
  int rank = 0, world = 1, device = 0;
};

namespace {
void check_nccl(ncclResult_t r, const char* op) {
  if (r != ncclSuccess)
    throw CommError(std::string("NCCL ") + op + " failed: " + ncclGetErrorString(r) +
                    " (set NCCL_DEBUG=INFO for details; a peer rank may have died)");
}
void check_cuda(cudaError_t e, const char* op) {
  if (e != cudaSuccess) throw CommError(std::string("CUDA ") + op + " failed: " + cudaGetErrorString(e));
}
ncclDataType_t nccl_type(ElemType t) {
  return t == ElemType::Float32 ? ncclFloat32 : t == ElemType::Float64 ? ncclFloat64 : ncclUint8;
}
}  // namespace

int NcclProcessGroup::device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;  // the count is left unwritten without a driver
  return n;
}

NcclProcessGroup::NcclProcessGroup(ProcessGroup& bootstrap, int device)
    : impl_(std::make_unique<Impl>()), bootstrap_(bootstrap) {
  const int n = device_count();
  if (n == 0) throw CommError("NcclProcessGroup: no CUDA device here (no driver or no GPU); use the MPI group on CPUs");
  impl_->rank = bootstrap.rank();
  impl_->world = bootstrap.world_size();
  impl_->device = device >= 0 ? device : impl_->rank % n;
  check_cuda(cudaSetDevice(impl_->device), "cudaSetDevice");
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (impl_->rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  bootstrap.broadcast(std::span<std::byte>(reinterpret_cast<std::byte*>(&id), sizeof id), 0);
  check_nccl(ncclCommInitRank(&impl_->comm, impl_->world, id, impl_->rank), "ncclCommInitRank");
  check_cuda(cudaStreamCreate(&impl_->stream), "cudaStreamCreate");
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&impl_->scratch), sizeof(float)), "cudaMalloc");
}

NcclProcessGroup::~NcclProcessGroup() {
  if (impl_->scratch) cudaFree(impl_->scratch);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
  if (impl_->comm) ncclCommDestroy(impl_->comm);
}

int NcclProcessGroup::rank() const { return impl_->rank; }
int NcclProcessGroup::world_size() const { return impl_->world; }
int NcclProcessGroup::device() const { return impl_->device; }

void NcclProcessGroup::all_reduce_raw(void* buf, int64_t n, ElemType t, ReduceOp op) {
  if (n == 0) return;
  check_nccl(ncclAllReduce(buf, buf, (size_t)n, nccl_type(t), op == ReduceOp::Average ? ncclAvg : ncclSum, impl_->comm,
                           impl_->stream),
             "ncclAllReduce");
  check_cuda(cudaStreamSynchronize(impl_->stream), "cudaStreamSynchronize");
}

void NcclProcessGroup::broadcast_raw(void* buf, int64_t n, ElemType t, int root) {
  if (n == 0) return;
  check_nccl(ncclBroadcast(buf, buf, (size_t)n, nccl_type(t), root, impl_->comm, impl_->stream), "ncclBroadcast");
  check_cuda(cudaStreamSynchronize(impl_->stream), "cudaStreamSynchronize");
}

void NcclProcessGroup::all_gather_raw(const void* in, void* out, int64_t n, ElemType t) {
  if (n == 0) return;
  check_nccl(ncclAllGather(in, out, (size_t)n, nccl_type(t), impl_->comm, impl_->stream), "ncclAllGather");
  check_cuda(cudaStreamSynchronize(impl_->stream), "cudaStreamSynchronize");
}

void NcclProcessGroup::barrier() { all_reduce_raw(impl_->scratch, 1, ElemType::Float32, ReduceOp::Sum); }

void NcclProcessGroup::abort(const std::string& why, int exit_code) {
  if (impl_->comm) ncclCommAbort(impl_->comm);
  impl_->comm = nullptr;
  bootstrap_.abort(why, exit_code);
  std::abort();  // not reached: the bootstrap group's abort ends the process
}

}  // namespace nl::dist
