// normlab_bench_bf16_matmul: GFLOP/s of the CPU backend's bfloat16 products (Backend::gemm_mixed:
// oneDNN, bfloat16 operands, float32 accumulation and result) against its float32 ones (OpenBLAS sgemm
// through Backend::gemm / gemm_grid) on the Transformer's shapes of issue 26: the linear layers of the
// small / cls models at 4096 tokens, their weight gradients (transposed operand), the vocabulary
// projection and the attention's per-head grid. Per shape and path: the median of --reps timed calls
// after one warm-up, as wall time, and GFLOP/s = 2 M N K (× products) / time; plus the oneDNN
// implementation that ran (its ISA: brg:avx512_core_bf16, brg:avx512_core_amx, ...). With --fallback also
// the emulated bfloat16 path (widen to float32, then sgemm) that NORMLAB_BF16_FALLBACK=1 forces.
// Prints one JSON object. Timings need a quiet machine: a shared one only shows that it runs.
// Usage: normlab_bench_bf16_matmul [--threads 1] [--reps 10] [--fallback]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/threads.h"
#include "backends/mixed_precision.h"
#include "tensor/tensor.h"

namespace {
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}
template <typename F> double median_ms(F&& f, int reps) {
  f();  // warm-up: primitive creation, allocator, caches
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return median(t);
}

// One product grid: C(o, b) = op(A) op(B), row-major, as the model runs it.
struct Shape {
  std::string name;
  int64_t M, N, K;
  bool ta = false, tb = false;
  int64_t batch = 1, outer = 1;
  int64_t lda = 0, ldb = 0, ldc = 0, sA = 0, sB = 0, sC = 0, oA = 0, oB = 0, oC = 0;
  int64_t a_elems = 0, b_elems = 0, c_elems = 0;
};
Shape dense(std::string name, int64_t M, int64_t N, int64_t K, bool ta = false) {
  Shape s{std::move(name), M, N, K, ta};
  s.lda = ta ? M : K, s.ldb = N, s.ldc = N;
  s.a_elems = M * K, s.b_elems = K * N, s.c_elems = M * N;
  return s;
}
// The attention's products over B sequences × H heads with heads-last q, k, v [B, T, H, dh].
Shape scores(int64_t B, int64_t H, int64_t T, int64_t dh) {
  Shape s{"attention q k^T grid B=" + std::to_string(B) + " H=" + std::to_string(H) + " T=" + std::to_string(T) +
              " dh=" + std::to_string(dh),
          T, T, dh, false, true, H, B};
  s.lda = s.ldb = H * dh, s.sA = s.sB = dh, s.oA = s.oB = T * H * dh;
  s.ldc = T, s.sC = T * T, s.oC = H * T * T;
  s.a_elems = s.b_elems = B * T * H * dh, s.c_elems = B * H * T * T;
  return s;
}
Shape pv(int64_t B, int64_t H, int64_t T, int64_t dh) {
  Shape s{"attention P v grid B=" + std::to_string(B) + " H=" + std::to_string(H) + " T=" + std::to_string(T) +
              " dh=" + std::to_string(dh),
          T, dh, T, false, false, H, B};
  s.lda = T, s.sA = T * T, s.oA = H * T * T;
  s.ldb = H * dh, s.sB = dh, s.oB = T * H * dh;
  s.ldc = H * dh, s.sC = dh, s.oC = T * H * dh;
  s.a_elems = B * H * T * T, s.b_elems = s.c_elems = B * T * H * dh;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bfloat16 (oneDNN) vs float32 (OpenBLAS) products on the Transformer's shapes"};
  int threads = 1, reps = 10;
  bool fallback = false;
  app.add_option("--threads", threads, "threads (OpenMP, OpenBLAS and oneDNN alike)")->check(CLI::Range(1, 256));
  app.add_option("--reps", reps, "timed calls per shape and path")->check(CLI::Range(1, 10000));
  app.add_flag("--fallback", fallback, "also time the emulated bfloat16 path (NORMLAB_BF16_FALLBACK=1)");
  CLI11_PARSE(app, argc, argv);
  if (!nl::cpu_bf16_products_available()) {
    std::cerr << "normlab_bench_bf16_matmul: this build has no oneDNN (install libdnnl-dev and rebuild)\n";
    return 1;
  }
  nl::set_num_threads(threads);
  const std::vector<Shape> shapes = {
      dense("qkv [4096x128]x[128x384]", 4096, 384, 128),
      dense("ffn fc1 [4096x128]x[128x512]", 4096, 512, 128),
      dense("ffn fc2 [4096x512]x[512x128]", 4096, 128, 512),
      dense("ffn fc1 [4096x256]x[256x1024]", 4096, 1024, 256),
      dense("ffn fc2 [4096x1024]x[1024x256]", 4096, 256, 1024),
      dense("weight grad [256x4096]x[4096x1024] (A^T)", 256, 1024, 4096, true),
      dense("weight grad [1024x4096]x[4096x256] (A^T)", 1024, 256, 4096, true),
      dense("vocabulary [4096x256]x[256x8000]", 4096, 8000, 256),
      scores(128, 4, 32, 64),
      pv(128, 4, 32, 64),
  };
  nl::Backend& cpu = nl::backend_for(nl::DeviceType::CPU);
  nlohmann::json rows = nlohmann::json::array();
  for (const Shape& s : shapes) {
    nl::manual_seed(1);
    const nl::Tensor a32 = nl::Tensor::randn({s.a_elems}), b32 = nl::Tensor::randn({s.b_elems});
    const nl::Tensor a16 = a32.to(nl::DType::BFloat16), b16 = b32.to(nl::DType::BFloat16);
    nl::Tensor c = nl::Tensor::zeros({s.c_elems});
    nl::MixedGemm g;
    g.M = s.M, g.N = s.N, g.K = s.K, g.batch = s.batch, g.outer = s.outer;
    g.A = {a16.desc().data, s.lda, s.sA, s.oA, s.ta};
    g.B = {b16.desc().data, s.ldb, s.sB, s.oB, s.tb};
    g.C = c.desc().data, g.ldc = s.ldc, g.strideC = s.sC, g.outerC = s.oC;
    const double flop = 2.0 * (double)s.M * (double)s.N * (double)s.K * (double)(s.batch * s.outer);
    const double bf16_ms = median_ms([&] { cpu.gemm_mixed(g); }, reps);
    const double f32_ms = median_ms(
        [&] {
          cpu.gemm_grid(nl::DType::Float32, s.ta, s.tb, s.M, s.N, s.K, 1.0, a32.desc().data, s.lda, s.sA, s.oA,
                        b32.desc().data, s.ldb, s.sB, s.oB, 0.0, c.desc().data, s.ldc, s.sC, s.oC, s.batch, s.outer, 0);
        },
        reps);
    nlohmann::json row = {{"shape", s.name},
                          {"gflop", flop * 1e-9},
                          {"bf16_onednn_ms", bf16_ms},
                          {"bf16_onednn_gflops", flop / bf16_ms * 1e-6},
                          {"f32_openblas_ms", f32_ms},
                          {"f32_openblas_gflops", flop / f32_ms * 1e-6},
                          {"speedup_bf16_over_f32", f32_ms / bf16_ms},
                          {"onednn_impl", nl::cpu::bf16_gemm_impl(g)}};
    if (fallback) {
      setenv("NORMLAB_BF16_FALLBACK", "1", 1);
      const double fb_ms = median_ms([&] { cpu.gemm_mixed(g); }, reps);
      unsetenv("NORMLAB_BF16_FALLBACK");
      row["bf16_fallback_ms"] = fb_ms;
      row["bf16_fallback_gflops"] = flop / fb_ms * 1e-6;
    }
    rows.push_back(row);
    std::cerr << s.name << ": bf16 " << row["bf16_onednn_gflops"].get<double>() << " GFLOP/s, f32 "
              << row["f32_openblas_gflops"].get<double>() << " GFLOP/s\n";
  }
  nlohmann::json out = {{"threads", threads}, {"reps", reps}, {"bf16", nl::cpu_bf16_info()}, {"shapes", rows}};
  std::cout << out.dump(2) << std::endl;
  return 0;
}
