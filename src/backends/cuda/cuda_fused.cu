// CUDA fused kernels: softmax / log-softmax (+ backward), dropout, cross-entropy with label smoothing
// and ignore_index (+ backward), the LayerNorm family (Xu et al. 2019, forward and the closed-form
// backward of appendix B) and Adam/AdamW. Row kernels run one block per row and reduce in double, as
// the CPU kernels (cpu_nn.cpp, cpu_norm.cpp, cpu_optim.cpp) do; the formulas are theirs. The conv
// helpers come from CompositeKernels (cuda_backend.h); attention rows are in cuda_attention.cu.
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "backends/cpu/counter_rng.h"
#include "backends/composite/scratch.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_launch.cuh"
#include "backends/cuda/cuda_reduce.cuh"
#include "backends/cuda/cuda_rows.cuh"
#include "tensor/bfloat16.h"

namespace nl::cuda {
namespace {

// Logits that may be bfloat16 beside float32 math: read widened exactly, written rounded to nearest even.
template <typename T> __device__ inline T ldx(const T* p, int64_t i) { return p[i]; }
__device__ inline float ldx(const uint16_t* p, int64_t i) { return bf16_bits_to_float(p[i]); }
template <typename T> __device__ inline void stx(T* p, int64_t i, T v) { p[i] = v; }
__device__ inline void stx(uint16_t* p, int64_t i, float v) { p[i] = float_to_bf16_bits(v); }

// Row max m and sum of exp(x - m) (in T, as the CPU) of one row of X (T, or bfloat16 read as float);
// sum_x receives the sum of x.
template <typename T, typename X = T>
__device__ void row_lse_parts(const X* x, int64_t C, double& m, double& s, double& sum_x) {
  double lm = -INFINITY;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) lm = fmax(lm, (double)ldx(x, c));
  m = block_max(lm);
  double ls = 0, lx = 0;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
    ls += (double)exp(T(ldx(x, c) - T(m)));
    lx += (double)ldx(x, c);
  }
  s = block_sum(ls);
  sum_x = block_sum(lx);
}

template <typename T>
__global__ void softmax_kernel(T* out, const T* in, int64_t C, bool log) {
  const T* x = in + blockIdx.x * C;
  T* y = out + blockIdx.x * C;
  double m, s, sx;
  row_lse_parts<T>(x, C, m, s, sx);
  if (log) {
    const double lse = m + ::log(s);
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) y[c] = T((double)x[c] - lse);
  } else {
    const T inv = T(1.0 / s);
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) y[c] = exp(T(x[c] - T(m))) * inv;
  }
}
template <typename T>
__global__ void softmax_backward_kernel(T* gin, const T* gout, const T* yv, int64_t C, bool log) {
  const int64_t off = blockIdx.x * C;
  const T *y = yv + off, *g = gout + off;
  T* o = gin + off;
  double ls = 0;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) ls += log ? (double)g[c] : (double)g[c] * y[c];
  const T s = T(block_sum(ls));
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) o[c] = log ? g[c] - exp(y[c]) * s : y[c] * (g[c] - s);
}
template <typename T>
__global__ void dropout_kernel(T* o, const T* x, int64_t n, double p, T scale, uint64_t seed, uint64_t offset) {
  NL_GRID_LOOP(i, n) o[i] = x[i] * (cpu::uniform01(seed, offset + (uint64_t)i) > p ? scale : T(0));  // NaN * 0 stays NaN (PyTorch)
}
template <typename T, typename X>
__global__ void cross_entropy_kernel(T* loss, T* stats, const X* logits, const int64_t* tg, int64_t C,
                                     int64_t ignore_index, double eps, ErrorRecord* err) {
  const int64_t i = blockIdx.x;
  const X* x = logits + i * C;
  double m, s, sx;
  row_lse_parts<T>(x, C, m, s, sx);
  if (threadIdx.x != 0) return;
  stats[2 * i] = T(m);
  stats[2 * i + 1] = T(1.0 / s);
  const int64_t t = tg[i];
  if (t == ignore_index) {
    loss[i] = T(0);
    return;
  }
  if (t < 0 || t >= C) {
    if (atomicCAS(&err->op, 0, (int)kCrossEntropy) == 0) {
      err->index = t;
      err->bound = C;
    }
    loss[i] = T(0);
    return;
  }
  const double lse = m + ::log(s);
  loss[i] = T((1.0 - eps) * (lse - (double)ldx(x, t)) + eps * (lse - sx / (double)C));
}
// p = exp(x - m) · (1/Σ) from the forward's row statistics, as the CPU kernel.
template <typename T, typename X>
__global__ void cross_entropy_backward_kernel(X* g, const T* gl, const X* logits, const T* stats, const int64_t* tg,
                                              int64_t N, int64_t C, int64_t ignore_index, double eps) {
  const T off = T(eps / (double)C), on = T(1.0 - eps);
  NL_GRID_LOOP(e, N * C) {
    const int64_t i = e / C, c = e % C;
    if (tg[i] == ignore_index) {
      stx(g, e, T(0));
      continue;
    }
    const T s = gl[i];
    T v = s * (exp(T(ldx(logits, e) - stats[2 * i])) * stats[2 * i + 1] - off);
    if (c == tg[i]) v -= s * on;
    stx(g, e, v);
  }
}
template <typename T>
__global__ void layer_norm_kernel(T* y, T* mean, T* rstd, const T* xv, const T* w, const T* b, int64_t H,
                                  NormKernelOpts o, double nv) {
  const int64_t r = blockIdx.x;
  const T* x = xv + r * H;
  double mu = 0;
  if (o.center) {
    double ls = 0;
    for (int64_t i = threadIdx.x; i < H; i += blockDim.x) ls += x[i];
    mu = block_sum(ls) / (double)H;
  }
  double lss = 0;
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) {
    const double d = x[i] - mu;
    lss += d * d;
  }
  const double var = block_sum(lss) / nv;
  const double D = o.eps_inside ? sqrt(var + o.eps) : sqrt(var) + o.eps;
  // x - mu as (x - m) - lo (m: mu rounded to T, lo = mu - m), as the CPU kernel (cpu_norm.cpp, issue 28)
  const T inv = T(1.0 / D), m = T(mu), lo = T(mu - (double)m);
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x)
    y[r * H + i] = ((x[i] - m) - lo) * inv * (w ? w[i] : T(1)) + (b ? b[i] : T(0));  // y = g ⊙ n + b (Eq. 1)
  if (threadIdx.x == 0) {
    mean[r] = m;
    rstd[r] = inv;
  }
}
template <typename T>
__global__ void layer_norm_backward_kernel(T* gx, const T* gy, const T* xv, const T* mean, const T* rstd, const T* w,
                                           int64_t H, NormKernelOpts o, double nv, bool accumulate) {
  const int64_t r = blockIdx.x;
  const T *x = xv + r * H, *gyr = gy + r * H;
  // The mean again in double (the saved one is rounded to T), as the CPU kernel.
  (void)mean;
  double mu = 0;
  if (o.center) {
    double ls = 0;
    for (int64_t i = threadIdx.x; i < H; i += blockDim.x) ls += x[i];
    mu = block_sum(ls) / (double)H;
  }
  const double inv = rstd[r], D = 1.0 / inv;
  // The closed form runs on g = w ⊙ dL/dy (w = 1 without a weight).
  auto g = [&](int64_t i) { return w ? (double)gyr[i] * (double)w[i] : (double)gyr[i]; };
  double lg = 0, lS = 0;
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) {
    lg += g(i);
    lS += g(i) * ((double)x[i] - mu);
  }
  const double gsum = block_sum(lg), S = block_sum(lS);
  const double gbar = o.center && !o.detach_mean ? gsum / (double)H : 0.0;
  double coef = 0;
  if (!o.detach_std) {
    const double sprime = o.eps_inside ? D : D - o.eps;
    coef = sprime > 0 ? S / (nv * sprime * D * D) : 0.0;
  }
  for (int64_t j = threadIdx.x; j < H; j += blockDim.x) {
    const T v = T((g(j) - gbar) * inv - coef * ((double)x[j] - mu));
    gx[r * H + j] = accumulate ? T(gx[r * H + j] + v) : v;  // accumulate: the add a separate pass would make
  }
}
// dweight[j] = Σ_r dL/dy[r, j] · (x[r, j] - mu_r)/D_r and dbias[j] = Σ_r dL/dy[r, j], summed by the
// tiled two-pass column reduction (cuda_reduce.cuh): all SMs busy, deterministic.
template <typename T>
struct LnParamLoad {
  const T *gy, *x, *mean, *rstd;
  int64_t H;
  __device__ void operator()(int64_t r, int64_t j, double (&v)[2]) const {
    const double g = gy[r * H + j];
    v[0] = g * ((double)x[r * H + j] - (double)mean[r]) * (double)rstd[r];
    v[1] = g;
  }
};
template <typename T>
struct LnParamStore {
  T *gw, *gb;
  __device__ void operator()(int k, int64_t j, double s) const {
    if (k == 0 && gw) gw[j] = T(s);
    if (k == 1 && gb) gb[j] = T(s);
  }
};
template <typename T>
__global__ void adam_kernel(T* p, const T* g, T* mp, T* vp, int64_t n, T b1, T b2, T eps, T l2, T decay, T step,
                            T inv_sqrt_bc2) {
  NL_GRID_LOOP(i, n) {
    const T gi = g[i] + l2 * p[i];
    const T mi = b1 * mp[i] + (T(1) - b1) * gi;
    const T vi = b2 * vp[i] + (T(1) - b2) * gi * gi;
    mp[i] = mi;
    vp[i] = vi;
    p[i] = p[i] * decay - step * mi / (sqrt(vi) * inv_sqrt_bc2 + eps);
  }
}
}  // namespace

void CudaFused::softmax(const Desc& out, const Desc& in, bool log) {
  const int64_t R = rows_of(in), C = cols_of(in);
  if (R * C == 0) return;
  DeviceContext& c = context(in.device_index);
  dispatch_float(in.dtype, "softmax", [&](auto tag) {
    using T = decltype(tag);
    softmax_kernel<T><<<(unsigned)R, row_threads(C), 0, c.stream>>>(static_cast<T*>(out.data),
                                                                     static_cast<const T*>(in.data), C, log);
  });
  check_launch("softmax");
}

void CudaFused::softmax_backward(const Desc& gin, const Desc& gout, const Desc& y, bool log) {
  const int64_t R = rows_of(y), C = cols_of(y);
  if (R * C == 0) return;
  DeviceContext& c = context(y.device_index);
  dispatch_float(y.dtype, "softmax backward", [&](auto tag) {
    using T = decltype(tag);
    softmax_backward_kernel<T><<<(unsigned)R, row_threads(C), 0, c.stream>>>(
        static_cast<T*>(gin.data), static_cast<const T*>(gout.data), static_cast<const T*>(y.data), C, log);
  });
  check_launch("softmax backward");
}

void CudaFused::dropout(const Desc& out, const Desc& in, double p, uint64_t seed, uint64_t offset) {
  if (!out.contiguous() || !in.contiguous() || out.numel() != in.numel() || out.dtype != in.dtype)
    throw std::invalid_argument("dropout: input and output must be contiguous with the same size and dtype");
  const int64_t n = in.numel();
  if (n == 0) return;
  DeviceContext& c = context(in.device_index);
  dispatch_float(in.dtype, "dropout", [&](auto tag) {
    using T = decltype(tag);
    dropout_kernel<T><<<blocks_for(n), kThreads, 0, c.stream>>>(static_cast<T*>(out.data),
                                                                 static_cast<const T*>(in.data), n, p,
                                                                 T(1.0 / (1.0 - p)), seed, offset);
  });
  check_launch("dropout");
}

// Calls f(T{}, X{}) with T the compute type of `stats` and X the logits' element type (uint16_t bits for
// bfloat16 logits beside float32 math).
template <typename F>
void dispatch_logits(const Desc& stats, const Desc& logits, const char* op, F&& f) {
  dispatch_float(stats.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>)
      if (logits.dtype == DType::BFloat16) return f(T{}, uint16_t{});
    f(T{}, T{});
  });
}

void CudaFused::cross_entropy(const Desc& loss, const Desc& stats, const Desc& logits, const Desc& target,
                              int64_t ignore_index, double eps, const Desc& grad, double grad_scale) {
  const int64_t N = rows_of(logits), C = cols_of(logits);
  if (N == 0) return;
  DeviceContext& c = context(logits.device_index);
  dispatch_logits(stats, logits, "cross_entropy", [&](auto tag, auto xtag) {
    using T = decltype(tag);
    using X = decltype(xtag);
    cross_entropy_kernel<T, X><<<(unsigned)N, row_threads(C), 0, c.stream>>>(
        static_cast<T*>(loss.data), static_cast<T*>(stats.data), static_cast<const X*>(logits.data),
        static_cast<const int64_t*>(target.data), C, ignore_index, eps, c.err_dev);
  });
  check_launch("cross_entropy");
  if (grad.data && C > 0) {  // the backward kernel with gloss = grad_scale on every row
    composite::Scratch gl(core(), stats.dtype, logits.device_index, {N});
    core().fill(gl.d(), grad_scale);
    cross_entropy_backward(grad, gl.d(), logits, stats, target, ignore_index, eps);
  }
}

void CudaFused::cross_entropy_backward(const Desc& glogits, const Desc& gloss, const Desc& logits, const Desc& stats,
                                       const Desc& target, int64_t ignore_index, double eps) {
  const int64_t N = rows_of(logits), C = cols_of(logits);
  if (N * C == 0) return;
  DeviceContext& c = context(logits.device_index);
  dispatch_logits(stats, logits, "cross_entropy backward", [&](auto tag, auto xtag) {
    using T = decltype(tag);
    using X = decltype(xtag);
    cross_entropy_backward_kernel<T, X><<<blocks_for(N * C), kThreads, 0, c.stream>>>(
        static_cast<X*>(glogits.data), static_cast<const T*>(gloss.data), static_cast<const X*>(logits.data),
        static_cast<const T*>(stats.data), static_cast<const int64_t*>(target.data), N, C, ignore_index, eps);
  });
  check_launch("cross_entropy backward");
}

void CudaFused::layer_norm(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x, const Desc& weight,
                           const Desc& bias, const NormKernelOpts& o) {
  const int64_t H = cols_of(x), R = H ? x.numel() / H : 0;
  if (R == 0) return;
  DeviceContext& c = context(x.device_index);
  const double nv = o.unbiased ? (double)(H - 1) : (double)H;
  dispatch_float(x.dtype, "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    layer_norm_kernel<T><<<(unsigned)R, row_threads(H), 0, c.stream>>>(
        static_cast<T*>(y.data), static_cast<T*>(mean.data), static_cast<T*>(rstd.data),
        static_cast<const T*>(x.data), static_cast<const T*>(weight.data), static_cast<const T*>(bias.data), H, o,
        nv);
  });
  check_launch("layer_norm");
}

void CudaFused::layer_norm_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                    const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                    const NormKernelOpts& o, bool accumulate) {
  const int64_t H = cols_of(x), R = H ? x.numel() / H : 0;
  if (R == 0) return;
  DeviceContext& c = context(x.device_index);
  const double nv = o.unbiased ? (double)(H - 1) : (double)H;
  dispatch_float(x.dtype, "layer_norm backward", [&](auto tag) {
    using T = decltype(tag);
    layer_norm_backward_kernel<T><<<(unsigned)R, row_threads(H), 0, c.stream>>>(
        static_cast<T*>(gx.data), static_cast<const T*>(gy.data), static_cast<const T*>(x.data),
        static_cast<const T*>(mean.data), static_cast<const T*>(rstd.data), static_cast<const T*>(weight.data), H, o,
        nv, accumulate);
    check_launch("layer_norm backward");
    if (gweight.data || gbias.data)
      column_sums<2>(core(), x.device_index, c.stream, R, H,
                     LnParamLoad<T>{static_cast<const T*>(gy.data), static_cast<const T*>(x.data),
                                    static_cast<const T*>(mean.data), static_cast<const T*>(rstd.data), H},
                     LnParamStore<T>{static_cast<T*>(gweight.data), static_cast<T*>(gbias.data)});
  });
}

void CudaFused::adam_step(const Desc& param, const Desc& grad, const Desc& m, const Desc& v, const AdamKernelOpts& o) {
  const int64_t n = param.numel();
  if (n == 0) return;
  DeviceContext& c = context(param.device_index);
  const double bc1 = 1.0 - std::pow(o.beta1, (double)o.step), bc2 = 1.0 - std::pow(o.beta2, (double)o.step);
  dispatch_float(param.dtype, "adam", [&](auto tag) {
    using T = decltype(tag);
    adam_kernel<T><<<blocks_for(n), kThreads, 0, c.stream>>>(
        static_cast<T*>(param.data), static_cast<const T*>(grad.data), static_cast<T*>(m.data),
        static_cast<T*>(v.data), n, T(o.beta1), T(o.beta2), T(o.eps), o.decoupled ? T(0) : T(o.weight_decay),
        o.decoupled ? T(1.0 - o.lr * o.weight_decay) : T(1), T(o.lr / bc1), T(1.0 / std::sqrt(bc2)));
  });
  check_launch("adam");
}

}  // namespace nl::cuda
