#pragma once
// The CUDA backend: one stream and one cuBLAS handle per device, a caching device allocator
// (cuda_allocator.cpp), core kernels for float32/float64/int64 (cuda_elementwise.cu, cuda_reduce.cu,
// cuda_index.cu), cuBLAS strided-batched GEMM (cuda_blas.cpp) and fused kernels (cuda_fused_*.cu); the
// fused kernels it lacks come from CompositeKernels. Kernels are asynchronous: index errors found on the
// device are recorded and thrown at the next synchronize() / copy_to_host() (see Backend).
#include <atomic>
#include <string>

#include "backends/backend.h"
#include "backends/composite/composite_kernels.h"

namespace nl::cuda {

/// Fused kernels with CUDA implementations; the conv helpers (im2col, col2im, max pooling) are
/// inherited composites.
class CudaFused final : public CompositeKernels {
 public:
  using CompositeKernels::CompositeKernels;
  void softmax(const Desc& out, const Desc& in, bool log) override;
  void softmax_backward(const Desc& gin, const Desc& gout, const Desc& y, bool log) override;
  void dropout(const Desc& out, const Desc& in, double p, uint64_t seed, uint64_t offset) override;
  void cross_entropy(const Desc& loss, const Desc& stats, const Desc& logits, const Desc& target,
                     int64_t ignore_index, double label_smoothing, const Desc& grad, double grad_scale) override;
  void cross_entropy_backward(const Desc& glogits, const Desc& gloss, const Desc& logits, const Desc& stats,
                              const Desc& target, int64_t ignore_index, double label_smoothing) override;
  void layer_norm(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x, const Desc& weight,
                  const Desc& bias, const NormKernelOpts& o) override;
  void layer_norm_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy, const Desc& x,
                           const Desc& mean, const Desc& rstd, const Desc& weight, const NormKernelOpts& o,
                           bool accumulate) override;
  void attention_softmax(const Desc& probs, const Desc& dropped, const Desc& scores, const Desc& key_padding,
                         const Desc& attn_mask, const AttentionKernelOpts& o) override;
  void attention_softmax_backward(const Desc& gscores, const Desc& dropped, const Desc& gprobs, const Desc& probs,
                                  const AttentionKernelOpts& o) override;
  void adam_step(const Desc& param, const Desc& grad, const Desc& m, const Desc& v,
                 const AdamKernelOpts& o) override;
};

/// Backend for DeviceType::CUDA; see Backend for each method's contract.
class CudaBackend final : public Backend {
 public:
  CudaBackend() : fused_(*this) { set_fused(&fused_); }
  DeviceType type() const override { return DeviceType::CUDA; }
  std::string name() const override { return "cuda (cuBLAS + normlab kernels)"; }
  /// cudaGetDeviceProperties' name, "(sm_XY, M GiB)"; throws std::runtime_error when the query fails.
  std::string device_name(int device_index) const override;

  void* allocate(size_t nbytes, int device_index) override;
  void deallocate(void* p, size_t nbytes, int device_index) override;
  size_t bytes_cached() const override;
  void copy_to_host(void* dst, const void* src, size_t nbytes, int device_index) override;
  void copy_from_host(void* dst, const void* src, size_t nbytes, int device_index) override;
  void synchronize(int device_index) override;

  void fill(const Desc& out, double value) override;
  void copy(const Desc& out, const Desc& in) override;
  void unary(UnaryOp op, const Desc& out, const Desc& in, double a, double b) override;
  void binary(BinaryOp op, const Desc& out, const Desc& x, const Desc& y) override;
  void where(const Desc& out, const Desc& cond, const Desc& x, const Desc& y) override;
  void random(const Desc& out, bool normal, double lo, double hi, uint64_t seed, uint64_t offset) override;
  void reduce(ReduceOp op, const Desc& out, const Desc& in, int nreduce) override;
  void index_select_rows(const Desc& out, const Desc& table, const Desc& idx) override;
  void index_add_rows(const Desc& table, const Desc& idx, const Desc& src) override;
  void gather_rows(const Desc& out, const Desc& in, const Desc& idx) override;
  void scatter_add_rows(const Desc& gin, const Desc& idx, const Desc& g) override;
  void gemm(DType t, bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
            int64_t lda, int64_t strideA, const void* B, int64_t ldb, int64_t strideB, double beta, void* C,
            int64_t ldc, int64_t strideC, int64_t batch, int device_index) override;
  /// One cuBLAS call for the whole grid (cuda_blas.cu).
  void gemm_grid(DType t, bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                 int64_t lda, int64_t strideA, int64_t outerA, const void* B, int64_t ldb, int64_t strideB,
                 int64_t outerB, double beta, void* C, int64_t ldc, int64_t strideC, int64_t outerC, int64_t batch,
                 int64_t outer, int device_index) override;
  void gemm_mixed(const MixedGemm& g) override;  // cuda_bf16_blas.cpp
  void set_allow_tf32(bool on) override { tf32_.store(on, std::memory_order_relaxed); }
  /// The compute type of float32 / float64 products: CUBLAS_COMPUTE_32F_FAST_TF32 for float32 when
  /// set_allow_tf32(true), else CUBLAS_COMPUTE_32F / CUBLAS_COMPUTE_64F (as an int: cublas_v2.h stays out of here).
  int compute_type(DType t) const;

 private:
  CudaFused fused_;
  std::atomic<bool> tf32_{false};
};

}  // namespace nl::cuda
