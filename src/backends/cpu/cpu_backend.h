#pragma once
// The CPU backend: a caching allocator, OpenMP loops for elementwise ops and reductions, OpenBLAS
// (s/d)gemm for matrix products and oneDNN for the bfloat16 ones (cpu_bf16_gemm.cpp). BLAS is never
// called from inside an OpenMP region.
#include "backends/backend.h"

namespace nl {

/// Backend implementation for DeviceType::CPU: every core kernel and its own fused kernels (it is its
/// FusedKernels); see Backend / FusedKernels for each method's contract.
class CpuBackend final : public Backend, public FusedKernels {
 public:
  CpuBackend() { set_fused(this); }
  DeviceType type() const override { return DeviceType::CPU; }
  std::string name() const override { return "cpu (OpenBLAS + OpenMP)"; }

  void* allocate(size_t nbytes, int device_index) override;
  void deallocate(void* p, size_t nbytes, int device_index) override;
  size_t bytes_cached() const override;
  void copy_to_host(void* dst, const void* src, size_t nbytes, int device_index) override;
  void copy_from_host(void* dst, const void* src, size_t nbytes, int device_index) override;

  void fill(const Desc& out, double value) override;
  void copy(const Desc& out, const Desc& in) override;
  void unary(UnaryOp op, const Desc& out, const Desc& in, double a, double b) override;
  void binary(BinaryOp op, const Desc& out, const Desc& x, const Desc& y) override;
  void where(const Desc& out, const Desc& cond, const Desc& x, const Desc& y) override;
  void random(const Desc& out, bool normal, double lo, double hi, uint64_t seed, uint64_t offset) override;
  void dropout(const Desc& out, const Desc& in, double p, uint64_t seed, uint64_t offset) override;
  void dropout_add(const Desc& out, const Desc& residual, const Desc& in, double p, uint64_t seed,
                   uint64_t offset) override;
  void reduce(ReduceOp op, const Desc& out, const Desc& in, int nreduce) override;
  void gemm(DType t, bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
            int64_t lda, int64_t strideA, const void* B, int64_t ldb, int64_t strideB, double beta, void* C,
            int64_t ldc, int64_t strideC, int64_t batch, int device_index) override;
  void gemm_grid(DType t, bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                 int64_t lda, int64_t strideA, int64_t outerA, const void* B, int64_t ldb, int64_t strideB,
                 int64_t outerB, double beta, void* C, int64_t ldc, int64_t strideC, int64_t outerC, int64_t batch,
                 int64_t outer, int device_index) override;
  void gemm_mixed(const MixedGemm& g) override;
  void softmax(const Desc& out, const Desc& in, bool log) override;
  void softmax_backward(const Desc& gin, const Desc& gout, const Desc& y, bool log) override;
  void bias_relu_dropout(const Desc& out, const Desc& x, const Desc& bias, double p, uint64_t seed,
                         uint64_t offset) override;
  void bias_relu_dropout_backward(const Desc& gx, const Desc& gbias, const Desc& gout, const Desc& out,
                                  double p) override;
  void im2col(const Desc& cols, const Desc& in, const Conv2dGeom& g) override;
  void col2im(const Desc& gin, const Desc& cols, const Conv2dGeom& g) override;
  void maxpool2d(const Desc& out, const Desc& idx, const Desc& in, const Conv2dGeom& g) override;
  void maxpool2d_backward(const Desc& gin, const Desc& gout, const Desc& idx, const Conv2dGeom& g) override;
  void index_select_rows(const Desc& out, const Desc& table, const Desc& idx) override;
  void index_add_rows(const Desc& table, const Desc& idx, const Desc& src) override;
  void gather_rows(const Desc& out, const Desc& in, const Desc& idx) override;
  void scatter_add_rows(const Desc& gin, const Desc& idx, const Desc& g) override;
  void cross_entropy(const Desc& loss, const Desc& stats, const Desc& logits, const Desc& target,
                     int64_t ignore_index, double label_smoothing, const Desc& grad, double grad_scale) override;
  void cross_entropy_backward(const Desc& glogits, const Desc& gloss, const Desc& logits, const Desc& stats,
                              const Desc& target, int64_t ignore_index, double label_smoothing) override;
  void layer_norm(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x, const Desc& weight,
                  const Desc& bias, const NormKernelOpts& o) override;
  void layer_norm_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy, const Desc& x,
                           const Desc& mean, const Desc& rstd, const Desc& weight, const NormKernelOpts& o,
                           bool accumulate) override;
  void layer_norm_channels(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x, const Desc& weight,
                           const Desc& bias, int64_t groups, const NormKernelOpts& o) override;
  void layer_norm_channels_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                    const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                    int64_t groups, const NormKernelOpts& o, bool accumulate) override;
  void batch_norm_channels(const Desc& y, const Desc& mean, const Desc& var, const Desc& rstd, const Desc& x,
                           const Desc& weight, const Desc& bias, double eps) override;
  void batch_norm_channels_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                    const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                    bool accumulate) override;
  void attention_softmax(const Desc& probs, const Desc& dropped, const Desc& scores, const Desc& key_padding,
                         const Desc& attn_mask, const AttentionKernelOpts& o) override;
  void attention_softmax_backward(const Desc& gscores, const Desc& dropped, const Desc& gprobs, const Desc& probs,
                                  const AttentionKernelOpts& o) override;
  bool attention_bf16_operands() const override { return true; }
  void adam_step(const Desc& param, const Desc& grad, const Desc& m, const Desc& v,
                 const AdamKernelOpts& o) override;
};

/// The process-wide CPU backend.
CpuBackend& cpu_backend();

namespace cpu {
/// The implementation gemm_mixed runs for `g`'s layout: oneDNN's name for its primitive (e.g.
/// "brg:avx512_core_bf16", "brg:avx512_core_amx"; the primitive is created and cached if needed), normlab's
/// small-product kernel for what cpu::small_bf16_gemm_fits takes,
/// "fallback: float32 sgemm" on the emulated path, or "unavailable (no oneDNN)". For benchmarks and logs.
std::string bf16_gemm_impl(const MixedGemm& g);
}  // namespace cpu

}  // namespace nl
