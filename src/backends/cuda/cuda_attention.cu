// CUDA attention row kernels (Vaswani et al. 2017, Eq. 1), one block per row r = (b*heads + h)*tq + i of
// the [B*H*tq, tk] scores: masking (key padding, additive mask with -inf blocks, causal), softmax and
// counter-based dropout in the forward; the softmax/dropout backward from the saved weights P with the
// mask regenerated. Same rules and generator as cpu_attention.cpp (FusedKernels contract), so the
// dropout masks of both devices agree for one (seed, offset).
#include <cmath>

#include "backends/cpu/counter_rng.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_launch.cuh"
#include "backends/cuda/cuda_rows.cuh"

namespace nl::cuda {
namespace {

struct RowInfo {
  int64_t i, b, jmax;
  uint64_t ctr;
};
__device__ inline RowInfo row_info(int64_t r, const AttentionKernelOpts& o) {
  const int64_t i = r % o.tq, b = r / (o.tq * o.heads);
  int64_t jmax = o.tk;
  if (o.causal) jmax = max((int64_t)0, min(o.tk, i + (o.tk - o.tq) + 1));
  return {i, b, jmax, o.offset + (uint64_t)(r * o.tk)};
}
template <typename T>
__device__ inline T keep_scale(uint64_t ctr, int64_t j, const AttentionKernelOpts& o, T inv_keep) {
  if (o.dropout == 0.0) return T(1);
  return T(cpu::uniform01(o.seed, ctr + (uint64_t)j)) > T(o.dropout) ? inv_keep : T(0);
}

template <typename T>
__global__ void attention_forward_kernel(T* probs, T* dropped, const T* scores, const T* kpm, const T* am,
                                         AttentionKernelOpts o) {
  const int64_t r = blockIdx.x, tk = o.tk;
  const RowInfo c = row_info(r, o);
  const T* s = scores + r * tk;
  T* p = probs + r * tk;
  const T* pad = kpm ? kpm + c.b * tk : nullptr;
  const T* mrow = am ? am + c.i * tk : nullptr;
  const T scale = T(o.scale), inv_keep = T(1.0 / (1.0 - o.dropout));
  auto visible = [&](int64_t j) {
    return j < c.jmax && !(pad && pad[j] != T(0)) && !(mrow && mrow[j] == -INFINITY);
  };
  auto logit = [&](int64_t j) { return scale * s[j] + (mrow ? mrow[j] : T(0)); };
  double lm = -INFINITY;
  for (int64_t j = threadIdx.x; j < tk; j += blockDim.x)
    if (visible(j)) lm = fmax(lm, (double)logit(j));
  const T m = T(block_max(lm));  // every thread has read its scores before any write below
  double ls = 0;
  for (int64_t j = threadIdx.x; j < tk; j += blockDim.x) {
    const T e = visible(j) ? exp(T(logit(j) - m)) : T(0);
    p[j] = e;
    ls += e;
  }
  const double sum = block_sum(ls);
  const T inv = sum > 0 ? T(1.0 / sum) : T(0);  // every key blocked: zero weights
  for (int64_t j = threadIdx.x; j < tk; j += blockDim.x) {
    p[j] *= inv;
    if (o.dropout > 0) dropped[r * tk + j] = p[j] * keep_scale(c.ctr, j, o, inv_keep);
  }
}

template <typename T>
__global__ void attention_backward_kernel(T* gscores, T* dropped, const T* gprobs, const T* probs,
                                          AttentionKernelOpts o) {
  const int64_t r = blockIdx.x, tk = o.tk;
  const RowInfo c = row_info(r, o);
  const T *p = probs + r * tk, *g = gprobs + r * tk;
  T* ds = gscores + r * tk;
  const T scale = T(o.scale), inv_keep = T(1.0 / (1.0 - o.dropout));
  double ld = 0;  // sum_j P_j dP_j; ds holds dP (g[j] is read before ds[j] is written, same thread)
  for (int64_t j = threadIdx.x; j < tk; j += blockDim.x) {
    const T keep = keep_scale(c.ctr, j, o, inv_keep);
    if (o.dropout > 0) dropped[r * tk + j] = p[j] * keep;
    ds[j] = g[j] * keep;
    ld += (double)p[j] * ds[j];
  }
  const T dd = T(block_sum(ld));
  for (int64_t j = threadIdx.x; j < tk; j += blockDim.x) ds[j] = scale * p[j] * (ds[j] - dd);
}

void check_operand(const Desc& d, const char* name, DType t, int64_t n, const char* kernel) {
  if (d.dtype != t || !d.contiguous() || d.numel() != n)
    throw std::invalid_argument(std::string(kernel) + ": " + name + " must be contiguous " + dtype_name(t) + " with " +
                                std::to_string(n) + " elements; pass contiguous tensors of the scores' dtype");
}
}  // namespace

void CudaFused::attention_softmax(const Desc& probs, const Desc& dropped, const Desc& scores, const Desc& key_padding,
                                  const Desc& attn_mask, const AttentionKernelOpts& o) {
  const char* kernel = "attention_softmax";
  check_attention_args(scores, o, kernel);
  check_operand(probs, "probs", scores.dtype, scores.numel(), kernel);
  if (o.dropout > 0) check_operand(dropped, "dropped", scores.dtype, scores.numel(), kernel);
  if (key_padding.data) check_operand(key_padding, "key_padding", scores.dtype, o.batch * o.tk, kernel);
  if (attn_mask.data) check_operand(attn_mask, "attn_mask", scores.dtype, o.tq * o.tk, kernel);
  const int64_t R = o.batch * o.heads * o.tq;
  if (R * o.tk == 0) return;
  DeviceContext& c = context(scores.device_index);
  dispatch_float(scores.dtype, kernel, [&](auto tag) {
    using T = decltype(tag);
    attention_forward_kernel<T><<<(unsigned)R, row_threads(o.tk), 0, c.stream>>>(
        static_cast<T*>(probs.data), static_cast<T*>(dropped.data), static_cast<const T*>(scores.data),
        static_cast<const T*>(key_padding.data), static_cast<const T*>(attn_mask.data), o);
  });
  check_launch(kernel);
}

void CudaFused::attention_softmax_backward(const Desc& gscores, const Desc& dropped, const Desc& gprobs,
                                           const Desc& probs, const AttentionKernelOpts& o) {
  const char* kernel = "attention_softmax_backward";
  check_attention_args(probs, o, kernel);
  check_operand(gscores, "gscores", probs.dtype, probs.numel(), kernel);
  check_operand(gprobs, "gprobs", probs.dtype, probs.numel(), kernel);
  if (o.dropout > 0) check_operand(dropped, "dropped", probs.dtype, probs.numel(), kernel);
  const int64_t R = o.batch * o.heads * o.tq;
  if (R * o.tk == 0) return;
  DeviceContext& c = context(probs.device_index);
  dispatch_float(probs.dtype, kernel, [&](auto tag) {
    using T = decltype(tag);
    attention_backward_kernel<T><<<(unsigned)R, row_threads(o.tk), 0, c.stream>>>(
        static_cast<T*>(gscores.data), static_cast<T*>(dropped.data), static_cast<const T*>(gprobs.data),
        static_cast<const T*>(probs.data), o);
  });
  check_launch(kernel);
}

}  // namespace nl::cuda
