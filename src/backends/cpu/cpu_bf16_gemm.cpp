// Mixed-precision products of the CPU backend (Backend::gemm_mixed): bfloat16 operands, float32
// accumulation, float32 or bfloat16 result, the bias fused as a post-op, ReLU a pass after it. Where this
// CPU's bfloat16 products pay (cpu_bf16_products_native: AMX, or vdpbf16ps at least as fast as float32
// FMAs, as on Zen 4) they run on oneDNN's matmul primitive, created once per shape and layout and cached,
// except small ones without bias or ReLU (the attention's per-head grid), which run on normlab's own
// vdpbf16ps kernel (small_bf16_gemm.h); elsewhere as float32 products of the widened operands
// (bf16_float32_gemm.h): the same values up to float32 summation order. Without oneDNN in the build the
// products refuse to run (mixed_precision.h).
#include <algorithm>
#include <climits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "backends/cpu/bf16_convert.h"
#include "backends/cpu/bf16_dot_rate.h"
#include "backends/cpu/bf16_float32_gemm.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_features.h"
#include "backends/cpu/small_bf16_gemm.h"
#include "backends/cpu/threads.h"
#include "backends/gemm_check.h"
#include "backends/mixed_precision.h"
#include "backends/profiler.h"

#ifdef NORMLAB_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace nl {
namespace {

const uint16_t* mat16(const GemmMatrix& m, int64_t o, int64_t b) {
  return static_cast<const uint16_t*>(m.data) + o * m.outer + b * m.stride;
}

// C = max(C, 0) over every product of g's grid, a NaN kept (float32 or bfloat16 C).
void relu_grid(const MixedGemm& g) {
  const int64_t rows = g.outer * g.batch * g.M;
  const bool bf16 = g.c == DType::BFloat16;
#pragma omp parallel for schedule(static) if (rows * g.N >= kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r / (g.batch * g.M), b = (r / g.M) % g.batch, m = r % g.M;
    const int64_t off = o * g.outerC + b * g.strideC + m * g.ldc;
    if (bf16) {
      uint16_t* c = static_cast<uint16_t*>(g.C) + off;
      for (int64_t n = 0; n < g.N; ++n) {  // negative: sign bit set, not -0, not NaN
        const uint16_t mag = c[n] & 0x7fff;
        if ((c[n] & 0x8000) && mag != 0 && mag <= 0x7f80) c[n] = 0;
      }
    } else {
      float* c = static_cast<float*>(g.C) + off;
      for (int64_t n = 0; n < g.N; ++n) c[n] = c[n] < 0.0f ? 0.0f : c[n];
    }
  }
}

#ifdef NORMLAB_WITH_ONEDNN
using dnnl::memory;

// The layout of one product grid: everything a oneDNN matmul primitive is specialised on.
struct PrimKey {
  int64_t M, N, K, batch, outer, lda, sA, oA, ldb, sB, oB, ldc, sC, oC;
  bool ta, tb, bias, c_bf16;
  float alpha, beta;
  auto tie() const {
    return std::tie(M, N, K, batch, outer, lda, sA, oA, ldb, sB, oB, ldc, sC, oC, ta, tb, bias, c_bf16, alpha, beta);
  }
  bool operator<(const PrimKey& o) const { return tie() < o.tie(); }
};

struct Prim {
  dnnl::matmul prim;
  memory::desc a, b, c, bias;
  int bias_arg = 0;  // the execution argument of the bias: DNNL_ARG_BIAS or its binary post-op's source
  std::string impl;
};

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// Logical dims and strides of an operand of the grid [outer, batch, rows, cols]: broadcast grid axes
// (stride 0) get extent 1, as oneDNN's matmul broadcasts them; leading extent-1 axes are dropped
// (outer == 1, then batch == 1) for every operand alike, so all have the same rank.
memory::desc grid_md(memory::data_type dt, int64_t outer, int64_t batch, int64_t rows, int64_t cols, int64_t s_outer,
                     int64_t s_batch, int64_t s_row, int64_t s_col, int rank) {
  memory::dims d = {outer, batch, rows, cols}, s = {s_outer, s_batch, s_row, s_col};
  if (s_outer == 0) d[0] = 1;
  if (s_batch == 0) d[1] = 1;
  const int drop = 4 - rank;
  return memory::desc(memory::dims(d.begin() + drop, d.end()), dt, memory::dims(s.begin() + drop, s.end()));
}

Prim make_prim(const PrimKey& k) {
  const int rank = k.outer > 1 ? 4 : k.batch > 1 ? 3 : 2;
  const auto bf16 = memory::data_type::bf16, f32 = memory::data_type::f32;
  Prim p;
  // op(A)[m, k] sits at m * lda + k, or at k * lda + m when A is stored transposed (B alike).
  p.a = grid_md(bf16, k.outer, k.batch, k.M, k.K, k.oA, k.sA, k.ta ? 1 : k.lda, k.ta ? k.lda : 1, rank);
  p.b = grid_md(bf16, k.outer, k.batch, k.K, k.N, k.oB, k.sB, k.tb ? 1 : k.ldb, k.tb ? k.ldb : 1, rank);
  p.c = grid_md(k.c_bf16 ? bf16 : f32, k.outer, k.batch, k.M, k.N, k.oC ? k.oC : 1, k.sC ? k.sC : 1, k.ldc, 1, rank);
  // dst = alpha * acc + beta * dst + bias. With alpha = 1 and beta = 0 (a linear layer's forward) the bias
  // is oneDNN's own bias argument: acc + bias, rounded once to dst (the same value as the post-op below),
  // ~13% faster than the binary post-op on a 4096 x 384 x 128 product (Zen 4, one core). Otherwise alpha
  // is the output scale, then the post-ops in order: sum (beta), binary add of the bias row (oneDNN 2.x's
  // own bias argument is added before the output scale, which would give alpha * (acc + bias)). The ReLU
  // is not a post-op: oneDNN 2.6's eltwise ReLU (and clip, bounded ReLU) turn a NaN into 0 (measured),
  // where relu keeps it (PyTorch; tensor/ops.h).
  dnnl::primitive_attr attr;
  if (k.alpha != 1.0f) attr.set_output_scales(0, {k.alpha});
  dnnl::post_ops po;
  if (k.beta != 0.0f) po.append_sum(k.beta);
  const bool own_bias = k.bias && k.alpha == 1.0f && k.beta == 0.0f;
  if (k.bias) {
    memory::dims bd(rank, 1), bs(rank, k.N);
    bd[rank - 1] = k.N;
    bs[rank - 1] = 1;
    p.bias = memory::desc(bd, f32, bs);
    if (own_bias) {
      p.bias_arg = DNNL_ARG_BIAS;
    } else {
      p.bias_arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(po.len()) | DNNL_ARG_SRC_1;
      po.append_binary(dnnl::algorithm::binary_add, p.bias);
    }
  }
  attr.set_post_ops(po);
  const dnnl::matmul::desc md =
      own_bias ? dnnl::matmul::desc(p.a, p.b, p.bias, p.c) : dnnl::matmul::desc(p.a, p.b, p.c);
  const dnnl::matmul::primitive_desc pd(md, attr, engine());
  p.impl = pd.impl_info_str();
  p.prim = dnnl::matmul(pd);
  return p;
}

PrimKey key_of(const MixedGemm& g) {
  return {g.M,       g.N,        g.K,        g.batch,   g.outer,  g.A.ld,  g.A.stride,     g.A.outer,
          g.B.ld,    g.B.stride, g.B.outer,  g.ldc,     g.strideC, g.outerC, g.A.trans,   g.B.trans,
          g.bias != nullptr,     g.c == DType::BFloat16, (float)g.alpha, (float)g.beta};
}

// The cached primitive for g's layout, created on first use. A model has a few dozen layouts, but
// batches of varying length (max_tokens batching) bring new row counts, so the cache keeps the
// kCapacity most recently used (as oneDNN's own primitive cache, 1024 by default) and drops the oldest.
using PrimPtr = std::shared_ptr<const Prim>;
PrimPtr prim_for(const MixedGemm& g) {
  constexpr size_t kCapacity = 1024;
  static std::mutex mu;
  static std::list<std::pair<PrimKey, PrimPtr>> lru;  // most recent first
  static std::map<PrimKey, std::list<std::pair<PrimKey, PrimPtr>>::iterator> index;
  const PrimKey k = key_of(g);
  std::lock_guard<std::mutex> l(mu);
  if (auto it = index.find(k); it != index.end()) {
    lru.splice(lru.begin(), lru, it->second);
    return it->second->second;
  }
  cpu::request_amx_permission();
  PrimPtr p;
  try {
    p = std::make_shared<const Prim>(make_prim(k));
  } catch (const dnnl::error& e) {
    throw std::runtime_error(std::string("oneDNN could not create a bfloat16 matmul (M ") + std::to_string(g.M) +
                             ", N " + std::to_string(g.N) + ", K " + std::to_string(g.K) + ", batch " +
                             std::to_string(g.batch) + ", outer " + std::to_string(g.outer) + "): " + e.what());
  }
  lru.emplace_front(k, p);
  index[k] = lru.begin();
  if (lru.size() > kCapacity) {
    index.erase(lru.back().first);
    lru.pop_back();  // a caller still executing it holds its own reference
  }
  return p;
}

// oneDNN 2.6 runs some grids only on its reference kernel ("ref:any": a naive loop), e.g. a broadcast
// operand (a weight shared by every product of the batch). Those run as one cached 2-d primitive per
// product instead.
bool per_product(const MixedGemm& g, const Prim& p) {
  return (g.batch > 1 || g.outer > 1) && p.impl.rfind("ref", 0) == 0;
}
// Product (o, b) of g's grid as a grid of one.
MixedGemm product_of(const MixedGemm& g, int64_t o, int64_t b) {
  MixedGemm one = g;
  one.batch = one.outer = 1;
  one.A.data = mat16(g.A, o, b);
  one.B.data = mat16(g.B, o, b);
  one.A.stride = one.A.outer = one.B.stride = one.B.outer = 0;
  one.C = static_cast<char*>(g.C) + (o * g.outerC + b * g.strideC) * (int64_t)(g.c == DType::BFloat16 ? 2 : 4);
  one.strideC = one.outerC = 0;
  return one;
}

void onednn_gemm(const MixedGemm& g) {
  const PrimPtr pp = prim_for(g);
  const Prim& p = *pp;
  if (per_product(g, p)) {
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t b = 0; b < g.batch; ++b) onednn_gemm(product_of(g, o, b));
    return;
  }
  thread_local dnnl::stream stream(engine());
  const auto mem = [](const memory::desc& md, const void* ptr) {
    return memory(md, engine(), const_cast<void*>(ptr));
  };
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, mem(p.a, g.A.data)}, {DNNL_ARG_WEIGHTS, mem(p.b, g.B.data)}, {DNNL_ARG_DST, mem(p.c, g.C)}};
  if (g.bias) args.emplace(p.bias_arg, mem(p.bias, g.bias));
  p.prim.execute(stream, args);
  stream.wait();
  if (g.relu) relu_grid(g);
}

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx2: return "avx2";
    default: return "an older isa";
  }
}
#endif

}  // namespace

void CpuBackend::gemm_mixed(const MixedGemm& g) {
  check_mixed_gemm_args(g);
  if (g.M == 0 || g.N == 0 || g.batch == 0 || g.outer == 0) return;
  if (!cpu_bf16_products_available())
    throw std::runtime_error(
        "bfloat16 products on the CPU need oneDNN, which this build of normlab lacks: install libdnnl-dev "
        "(scripts/install-deps.sh) and rebuild, or compute in float32");
#ifdef NORMLAB_WITH_ONEDNN
  if (g.K > 0 && cpu_bf16_products_native()) {
    prof::Scope prof_scope(prof::Cat::Gemm);
    prof::add_gemm_flops(2.0 * (double)g.M * (double)g.N * (double)g.K * (double)(g.batch * g.outer));
    return cpu::small_bf16_gemm_fits(g) ? cpu::small_bf16_gemm_grid(g) : onednn_gemm(g);
  }
#endif
  cpu::bf16_gemm_float32(*this, g);  // times and counts its float32 products itself
}

std::string cpu::bf16_gemm_impl(const MixedGemm& g) {
  if (!cpu_bf16_products_available()) return "unavailable (no oneDNN)";
#ifdef NORMLAB_WITH_ONEDNN
  if (g.K > 0 && cpu_bf16_products_native()) {
    if (cpu::small_bf16_gemm_fits(g)) return "normlab small-product kernel (avx512_bf16 vdpbf16ps)";
    const PrimPtr p = prim_for(g);
    return per_product(g, *p) ? "per product: " + prim_for(product_of(g, 0, 0))->impl : p->impl;
  }
#endif
  return "float32 products of the widened operands";
}

bool cpu_bf16_products_available() {
#ifdef NORMLAB_WITH_ONEDNN
  return true;
#else
  return false;
#endif
}

bool cpu_bf16_products_native() {
  // The choice first: a bad NORMLAB_BF16_PRODUCTS is an error on every CPU, not only on one with bfloat16.
  const bool chosen = cpu::bf16_products_choice().native;
  return chosen && cpu_native_bf16();
}

std::string cpu_bf16_info() {
  const auto& f = cpu::cpu_features();
  const cpu::Bf16ProductsChoice& c = cpu::bf16_products_choice();
  std::string s = cpu_native_bf16() ? std::string("conversions native (") + (f.avx512_bf16 ? "AVX512_BF16" : "AMX-BF16") + ")"
                  : cpu::bf16_fallback_forced() ? "conversions emulated (NORMLAB_BF16_FALLBACK is set)"
                                                : "conversions emulated (no AVX512_BF16 or AMX on this CPU)";
  s += std::string(", products ") + (c.native ? "native" : "in float32") + " (" + c.why + ")";
#ifdef NORMLAB_WITH_ONEDNN
  const dnnl_version_t* v = dnnl::version();
  s += ", oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
       " on " + isa_name(dnnl::get_effective_cpu_isa());
#else
  s += "; built without oneDNN: bfloat16 products unavailable";
#endif
  return s;
}

}  // namespace nl
