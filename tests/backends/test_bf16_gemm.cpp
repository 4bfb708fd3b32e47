// Mixed-precision products on the CPU (Backend::gemm_mixed, matmul on bfloat16 tensors): each result
// equals the exact product of the bfloat16 operands within float32 accumulation error, on the
// Transformer's shapes (transposed operands, batched, the attention's per-head grid), with bias, ReLU,
// alpha, beta and bfloat16 results; the emulated path (NORMLAB_BF16_FALLBACK=1) agrees with the native one.
#include <catch2/catch.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "bf16_test_util.h"
#include "backends/cpu/bf16_float32_gemm.h"
#include "backends/cpu/cpu_features.h"
#include "backends/mixed_precision.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"
#include "test_paths.h"

using namespace nl;
using nltest::EnvGuard;
using Catch::Matchers::Contains;

namespace {

Tensor bf16_randn(const Shape& s, uint64_t seed) {
  manual_seed(seed);
  return Tensor::randn(s).to(DType::BFloat16);
}

// Largest violation of |got - exact| <= K * 2^-23 * (|a| @ |b|) + rel_round * |exact| over all elements,
// with exact = the float64 product of the bfloat16 operands (float64 holds each term exactly and sums far
// more precisely than float32; K * 2^-23 is twice the standard float32 accumulation bound K * u).
// rel_round = 2^-8 allows the final rounding of a bfloat16 result. <= 0 means within the bound.
double excess(const Tensor& got, const Tensor& a, const Tensor& b, double alpha = 1.0, double rel_round = 0.0) {
  const Tensor a64 = a.to(DType::Float64), b64 = b.to(DType::Float64);
  const int64_t K = a.size(-1);
  const auto exact = (matmul(a64, b64) * alpha).to_vector<double>();
  const auto scale = (matmul(abs(a64), abs(b64)) * std::fabs(alpha)).to_vector<double>();
  const auto g = got.to_vector<double>();
  REQUIRE(g.size() == exact.size());
  double worst = -1.0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double bound = (double)K * std::ldexp(1.0, -23) * scale[i] + rel_round * std::fabs(exact[i]) + 1e-30;
    worst = std::max(worst, std::fabs(g[i] - exact[i]) / bound - 1.0);
  }
  return worst;
}

double max_abs_diff(const Tensor& x, const Tensor& y) {
  const auto a = x.to_vector<double>(), b = y.to_vector<double>();
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// The Transformer products the issue lists, rows scaled down from 4096 tokens to keep the test short.
struct Case {
  const char* name;
  Tensor a, b;
};
std::vector<Case> transformer_cases() {
  std::vector<Case> v;
  v.push_back({"ffn fc1 [512x128]x[128x512]", bf16_randn({512, 128}, 1), bf16_randn({128, 512}, 2)});
  v.push_back({"qkv [512x128]x[128x384]", bf16_randn({512, 128}, 3), bf16_randn({128, 384}, 4)});
  v.push_back({"ffn fc2 [512x1024]x[1024x256]", bf16_randn({512, 1024}, 5), bf16_randn({1024, 256}, 6)});
  // weight gradient dW = dY^T X: A is a transposed view ([tokens, 256] read as [256, tokens])
  v.push_back({"weight grad [256x2048]^T-view x [2048x128]", bf16_randn({2048, 256}, 7).transpose(0, 1),
               bf16_randn({2048, 128}, 8)});
  // linear forward x W^T with W [out, in] (PyTorch's layout): B is a transposed view
  v.push_back({"x W^T [512x256]x[384x256]^T", bf16_randn({512, 256}, 9), bf16_randn({384, 256}, 10).transpose(0, 1)});
  v.push_back({"vocabulary [512x256]x[256x1000]", bf16_randn({512, 256}, 11), bf16_randn({256, 1000}, 12)});
  v.push_back({"batched heads [8,64,32]x[8,32,64]", bf16_randn({8, 64, 32}, 13), bf16_randn({8, 32, 64}, 14)});
  v.push_back({"odd sizes [37x19]x[19x23]", bf16_randn({37, 19}, 15), bf16_randn({19, 23}, 16)});
  return v;
}

// A grid product on the CPU backend from plain tensors (data pointers of contiguous storage).
const void* ptr(const Tensor& t) { return t.desc().data; }

}  // namespace

TEST_CASE("bf16 gemm: without oneDNN a bfloat16 product says what is missing", "[bf16][gemm]") {
  if (cpu_bf16_products_available()) {
    CHECK_NOTHROW(matmul(bf16_randn({2, 3}, 1), bf16_randn({3, 2}, 2)));
    CHECK_THAT(cpu_bf16_info(), Contains("oneDNN 2."));
    return;
  }
  CHECK_THROWS_WITH(matmul(bf16_randn({2, 3}, 1), bf16_randn({3, 2}, 2)),
                    Contains("need oneDNN") && Contains("libdnnl-dev"));
  CHECK_THAT(cpu_bf16_info(), Contains("without oneDNN"));
}

TEST_CASE("bf16 gemm: Transformer products equal the exact product of the rounded operands within float32 "
          "accumulation error, native and emulated",
          "[bf16][gemm][threads2]") {
  NL_SKIP_WITHOUT_ONEDNN();
  for (const Case& c : transformer_cases()) {
    INFO(c.name << " on " << cpu_bf16_info());
    // Every path: native (forced where the CPU has bfloat16 instructions, whatever its rates choose), float32
    // products of the widened operands, and the emulated path of a CPU without bfloat16 instructions.
    std::vector<std::pair<const char*, const char*>> paths = {{"NORMLAB_BF16_PRODUCTS", "float32"},
                                                              {"NORMLAB_BF16_FALLBACK", "1"}};
    if (cpu::cpu_features().avx512_bf16 || cpu::cpu_features().amx_bf16)
      paths.insert(paths.begin(), {"NORMLAB_BF16_PRODUCTS", "native"});
    std::vector<Tensor> results;
    for (const auto& [var, value] : paths) {
      INFO(var << "=" << value);
      EnvGuard g(var, value);
      const Tensor y = matmul(c.a, c.b);
      CHECK(y.dtype() == DType::Float32);
      CHECK(excess(y, c.a, c.b) <= 0.0);
      // The same product twice gives the same bits (a cached primitive, no run-to-run variation).
      CHECK(max_abs_diff(matmul(c.a, c.b), y) == 0.0);
      results.push_back(y);
    }
    // All within the bound of one exact value, so within twice the bound of each other; in practice
    // they differ only by summation order.
    const double scale = max_abs_diff(results[0], Tensor::zeros(results[0].shape()));
    for (size_t i = 1; i < results.size(); ++i) CHECK(max_abs_diff(results[0], results[i]) <= 1e-5 * scale);
  }
}

TEST_CASE("bf16 gemm: bfloat16 results round the float32 accumulator once", "[bf16][gemm]") {
  NL_SKIP_WITHOUT_ONEDNN();
  for (const char* products : {"native", "float32"}) {  // C rounded by oneDNN, by the blocked products
    if (std::string(products) == "native" && !cpu::cpu_features().avx512_bf16 && !cpu::cpu_features().amx_bf16) continue;
    INFO("products " << products);
    EnvGuard g("NORMLAB_BF16_PRODUCTS", products);
    const Tensor a = bf16_randn({96, 200}, 21), b = bf16_randn({200, 72}, 22);
    const Tensor c = matmul(a, b, DType::BFloat16);
    CHECK(c.dtype() == DType::BFloat16);
    CHECK(excess(c, a, b, 1.0, std::ldexp(1.0, -8)) <= 0.0);
  }
  CHECK_THROWS_WITH(matmul(bf16_randn({2, 3}, 1), bf16_randn({3, 2}, 2), DType::Float64),
                    Contains("bfloat16 operands cannot give a float64 result"));
  CHECK_THROWS_WITH(matmul(bf16_randn({2, 3}, 1), Tensor::ones({3, 2})), Contains("dtype mismatch"));
}

TEST_CASE("bf16 gemm: addmm and matmul_out take bfloat16 operands with float32 bias and output", "[bf16][gemm]") {
  NL_SKIP_WITHOUT_ONEDNN();
  const Tensor a = bf16_randn({64, 48}, 31), b = bf16_randn({48, 40}, 32);
  manual_seed(33);
  const Tensor bias = Tensor::randn({40});
  const Tensor y = addmm(bias, a, b);
  CHECK(y.dtype() == DType::Float32);
  const Tensor plain = matmul(a, b);
  CHECK(max_abs_diff(y, plain + bias) <= 1e-5);
  // matmul_out with beta = 1 accumulates (a weight gradient summed over blocks).
  Tensor acc = plain.clone();
  matmul_out(acc, a, b, 1.0);
  CHECK(max_abs_diff(acc, plain * 2.0) <= 1e-5);
  Tensor wrong = Tensor::zeros({64, 40}, DType::Float64);
  CHECK_THROWS_WITH(matmul_out(wrong, a, b), Contains("cannot give a float64 result"));
}

TEST_CASE("bf16 gemm: addmm_relu_out gives the bits of the float32 product, bias and ReLU rounded once, on both "
          "paths",
          "[bf16][gemm]") {
  NL_SKIP_WITHOUT_ONEDNN();
  for (const char* products : {"native", "float32"}) {  // C rounded by oneDNN, by the blocked products
    if (std::string(products) == "native" && !cpu::cpu_features().avx512_bf16 && !cpu::cpu_features().amx_bf16) continue;
    INFO("products " << products);
    EnvGuard g("NORMLAB_BF16_PRODUCTS", products);
    const Tensor a = bf16_randn({300, 128}, 41), b = bf16_randn({128, 200}, 42);
    manual_seed(43);
    const Tensor bias = Tensor::randn({200});
    // the FFN's path before: a float32 product, then bias + ReLU, rounded to bfloat16 once
    Tensor f = Tensor::empty({300, 200});
    matmul_out(f, a, b);
    Tensor want = Tensor::empty({300, 200}, DType::BFloat16);
    bias_relu_dropout_out(want, f, bias, 0.0, 0, 0);
    Tensor got16 = Tensor::empty({300, 200}, DType::BFloat16), got32 = Tensor::empty({300, 200});
    addmm_relu_out(got16, bias, a, b);
    addmm_relu_out(got32, bias, a, b);
    const std::vector<float> g16 = got16.to(DType::Float32).to_vector<float>(),
                             w16 = want.to(DType::Float32).to_vector<float>();
    if (std::string(products) == "native" || cpu::bf16_float32_blocked_kernel()) {
      CHECK(g16 == w16);
    } else {
      // OpenBLAS runs the widened products 256 rows at a time (a bfloat16 C), and its bits depend on the row
      // count: each value is the rounding of the same sum in another order, so equal or one bfloat16 ulp away.
      int64_t unequal = 0, worst = 0;
      for (size_t i = 0; i < g16.size(); ++i) {
        uint32_t a, b;
        std::memcpy(&a, &g16[i], 4), std::memcpy(&b, &w16[i], 4);
        const int64_t d = std::abs((int64_t)(a >> 16) - (int64_t)(b >> 16));
        unequal += d != 0, worst = std::max(worst, d);
      }
      CHECK(worst <= 1);
      CHECK(unequal * 20 < (int64_t)g16.size());  // rare: the float32 sums rarely straddle a rounding boundary
    }
    CHECK(got32.to_vector<float>() == relu(add(f, bias)).to_vector<float>());
  }
  Tensor out = Tensor::empty({2, 2});
  CHECK_THROWS_WITH(addmm_relu_out(out, Tensor::zeros({2}), Tensor::ones({2, 3}), Tensor::ones({3, 2})),
                    Contains("needs bfloat16 operands"));
}

TEST_CASE("bf16 gemm: bias, ReLU, alpha and beta as post-ops match their definition", "[bf16][gemm]") {
  NL_SKIP_WITHOUT_ONEDNN();
  const int64_t M = 33, N = 47, K = 65;
  const Tensor a = bf16_randn({M, K}, 41), b = bf16_randn({K, N}, 42);
  manual_seed(43);
  const Tensor bias = Tensor::randn({N}), c0 = Tensor::randn({M, N});
  const Tensor exact = matmul(a.to(DType::Float64), b.to(DType::Float64));
  for (bool fallback : {false, true}) {
    for (double alpha : {1.0, 0.125}) {
      for (double beta : {0.0, 1.0, -0.5}) {
        for (bool relu : {false, true}) {
          INFO("fallback " << fallback << " alpha " << alpha << " beta " << beta << " relu " << relu);
          EnvGuard g("NORMLAB_BF16_FALLBACK", fallback ? "1" : "0");
          Tensor c = c0.clone();
          MixedGemm gm;
          gm.M = M, gm.N = N, gm.K = K, gm.alpha = alpha, gm.beta = beta;
          gm.A = {ptr(a), K, 0, 0, false};
          gm.B = {ptr(b), N, 0, 0, false};
          gm.C = c.desc().data, gm.ldc = N;
          gm.bias = bias.data<float>();
          gm.relu = relu;
          backend_for(DeviceType::CPU).gemm_mixed(gm);
          Tensor want = exact * alpha + c0.to(DType::Float64) * beta + bias.to(DType::Float64);
          if (relu) want = clamp_min(want, 0.0);
          CHECK(max_abs_diff(c, want) <= 1e-4);
        }
      }
    }
  }
}

TEST_CASE("bf16 gemm: a NaN operand gives NaN through the ReLU on both paths and result dtypes, as PyTorch's relu",
          "[bf16][gemm]") {
  NL_SKIP_WITHOUT_ONEDNN();
  Tensor a = Tensor::from_vector<float>({1, 1, 1, -1, -1, -1}, {2, 3});
  a.data<float>()[1] = std::nanf("");  // row 0 of the product is NaN, row 1 is -3
  const Tensor a16 = a.to(DType::BFloat16), b16 = Tensor::ones({3, 4}, DType::BFloat16);
  for (bool fallback : {false, true}) {
    for (DType cd : {DType::Float32, DType::BFloat16}) {
      INFO("fallback " << fallback << " result " << dtype_name(cd));
      EnvGuard g("NORMLAB_BF16_FALLBACK", fallback ? "1" : "0");
      Tensor c = Tensor::zeros({2, 4}, cd);
      MixedGemm gm;
      gm.c = cd;
      gm.M = 2, gm.N = 4, gm.K = 3, gm.relu = true;
      gm.A = {ptr(a16), 3, 0, 0, false};
      gm.B = {ptr(b16), 4, 0, 0, false};
      gm.C = c.desc().data, gm.ldc = 4;
      backend_for(DeviceType::CPU).gemm_mixed(gm);
      const auto v = c.to_vector<float>();
      for (int j = 0; j < 4; ++j) CHECK(std::isnan(v[j]));
      for (int j = 4; j < 8; ++j) CHECK(v[j] == 0.0f);
    }
  }
}

TEST_CASE("bf16 gemm: K = 0 gives beta * C + bias, and empty grids do nothing", "[bf16][gemm]") {
  NL_SKIP_WITHOUT_ONEDNN();
  Tensor c = Tensor::full({3, 4}, 2.0);
  const Tensor bias = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  const Tensor a = Tensor::empty({3, 0}, DType::BFloat16), b = Tensor::empty({0, 4}, DType::BFloat16);
  MixedGemm gm;
  gm.M = 3, gm.N = 4, gm.K = 0, gm.beta = 0.5;
  gm.A = {ptr(a), 1, 0, 0, false};
  gm.B = {ptr(b), 4, 0, 0, false};
  gm.C = c.desc().data, gm.ldc = 4;
  gm.bias = bias.data<float>();
  backend_for(DeviceType::CPU).gemm_mixed(gm);
  CHECK(c.to_vector<float>() == std::vector<float>{2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5});
  CHECK(matmul(a, b).to_vector<float>() == std::vector<float>(12, 0.0f));
  gm.M = 0;
  CHECK_NOTHROW(backend_for(DeviceType::CPU).gemm_mixed(gm));
}

TEST_CASE("bf16 gemm: the attention's per-head grid (heads-last layout, scaled scores, P V) and a "
          "broadcast operand",
          "[bf16][gemm][threads2]") {
  NL_SKIP_WITHOUT_ONEDNN();
  const int64_t B = 3, T = 40, H = 4, dh = 32;
  const Tensor q = bf16_randn({B, T, H, dh}, 51), k = bf16_randn({B, T, H, dh}, 52), v = bf16_randn({B, T, H, dh}, 53);
  const double scale = 1.0 / std::sqrt((double)dh);
  for (bool fallback : {false, true}) {
    INFO("fallback " << fallback << " on " << cpu_bf16_info());
    EnvGuard g("NORMLAB_BF16_FALLBACK", fallback ? "1" : "0");
    // scores[b, h] = scale * q[b, :, h, :] k[b, :, h, :]^T, written [B, H, T, T]
    Tensor scores = Tensor::empty({B, H, T, T});
    MixedGemm s;
    s.M = T, s.N = T, s.K = dh, s.batch = H, s.outer = B, s.alpha = scale;
    s.A = {ptr(q), H * dh, dh, T * H * dh, false};
    s.B = {ptr(k), H * dh, dh, T * H * dh, true};
    s.C = scores.desc().data, s.ldc = T, s.strideC = T * T, s.outerC = H * T * T;
    backend_for(DeviceType::CPU).gemm_mixed(s);
    // out[b, :, h, :] = P[b, h] v[b, :, h, :], written heads-last [B, T, H, dh]
    const Tensor p = bf16_randn({B, H, T, T}, 54);
    Tensor out = Tensor::empty({B, T, H, dh});
    MixedGemm o;
    o.M = T, o.N = dh, o.K = T, o.batch = H, o.outer = B;
    o.A = {ptr(p), T, T * T, H * T * T, false};
    o.B = {ptr(v), H * dh, dh, T * H * dh, false};
    o.C = out.desc().data, o.ldc = H * dh, o.strideC = dh, o.outerC = T * H * dh;
    backend_for(DeviceType::CPU).gemm_mixed(o);
    for (int64_t bi = 0; bi < B; ++bi)
      for (int64_t h = 0; h < H; ++h) {
        INFO("sequence " << bi << " head " << h);
        const Tensor qh = q.select(0, bi).select(1, h), kh = k.select(0, bi).select(1, h);
        CHECK(excess(scores.select(0, bi).select(0, h), qh, kh.transpose(0, 1), scale) <= 0.0);
        const Tensor ph = p.select(0, bi).select(0, h), vh = v.select(0, bi).select(1, h);
        CHECK(excess(out.select(0, bi).select(1, h), ph, vh) <= 0.0);
      }
    // One B shared by every product of the batch (stride 0): a weight broadcast over sequences.
    const Tensor x = bf16_randn({5, 16, 24}, 55), w = bf16_randn({24, 8}, 56);
    Tensor y = Tensor::empty({5, 16, 8});
    MixedGemm bc;
    bc.M = 16, bc.N = 8, bc.K = 24, bc.batch = 5;
    bc.A = {ptr(x), 24, 16 * 24, 0, false};
    bc.B = {ptr(w), 8, 0, 0, false};
    bc.C = y.desc().data, bc.ldc = 8, bc.strideC = 16 * 8;
    backend_for(DeviceType::CPU).gemm_mixed(bc);
    for (int64_t i = 0; i < 5; ++i) CHECK(excess(y.select(0, i), x.select(0, i), w) <= 0.0);
  }
}

TEST_CASE("sum_rows of a bfloat16 matrix: float32 sums of its widened values within 16-row block rounding",
          "[bf16][reduce]") {
  // Values with fractional bits, so that a float32 running sum would round differently from the double one.
  const int64_t R = 1000, C = 37;
  std::vector<float> v((size_t)(R * C));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (float)((int64_t)(i * 7919 % 61) - 30) * 0.3f + 1e-3f * (float)(i % 7);
  const Tensor m = Tensor::from_vector(v, {R, C}).to(DType::BFloat16);
  const std::vector<float> mv = m.to(DType::Float32).to_vector<float>();  // the bfloat16 values, widened
  auto want = [&](int64_t c) {
    double s = 0;
    for (int64_t r = 0; r < R; ++r) s += mv[(size_t)(r * C + c)];
    return s;
  };
  // float32 blocks of 16 rows: each block's sum rounded at most 16 times, then added in double
  auto bound = [&](int64_t c) {
    double a = 0;
    for (int64_t r = 0; r < R; ++r) a += std::fabs(mv[(size_t)(r * C + c)]);
    return 16 * std::ldexp(a, -24) + std::ldexp(std::fabs(want(c)), -24);
  };
  const Tensor s = sum_rows(m);  // row-major: the column-sum path
  REQUIRE(s.dtype() == DType::Float32);
  REQUIRE(s.shape() == Shape{C});
  const std::vector<float> got = s.to_vector<float>();
  for (int64_t c = 0; c < C; ++c) CHECK(std::fabs(got[(size_t)c] - want(c)) <= bound(c));
  // a transposed view (not row-major): widened to float32, then reduced; the same sums
  const Tensor mt = Tensor::from_vector(v, {R, C}).to(DType::BFloat16).transpose(0, 1).contiguous().transpose(0, 1);
  const std::vector<float> got_t = sum_rows(mt).to_vector<float>();
  for (int64_t c = 0; c < C; ++c) CHECK(std::fabs(got_t[(size_t)c] - want(c)) <= bound(c));
  CHECK(sum_rows(Tensor::ones({3, 2}, DType::Float64)).to_vector<double>() == std::vector<double>{3, 3});
  CHECK_THROWS_AS(sum_rows(Tensor::ones({3}, DType::Float32)), std::invalid_argument);
  // the backend's bfloat16 reductions: sums and means into float32, nothing else
  Tensor out = Tensor::empty({C}, DType::Float32);
  CHECK_THROWS_WITH(backend_for(DeviceType::CPU).reduce(ReduceOp::Max, out.desc(), m.transpose(0, 1).desc(), 1),
                    Catch::Matchers::Contains("max: does not take bfloat16"));
}

TEST_CASE("bf16 gemm: bad arguments are refused before any product runs", "[bf16][gemm]") {
  Backend& cpu = backend_for(DeviceType::CPU);
  MixedGemm g;
  g.M = g.N = g.K = 2;
  g.ab = DType::Float32;
  CHECK_THROWS_WITH(cpu.gemm_mixed(g), Contains("operands must be bfloat16, got float32"));
  g.ab = DType::BFloat16;
  g.c = DType::Int64;
  CHECK_THROWS_WITH(cpu.gemm_mixed(g), Contains("result must be float32 or bfloat16, got int64"));
  g.c = DType::Float32;
  g.K = int64_t(1) << 31;
  CHECK_THROWS_WITH(cpu.gemm_mixed(g), Contains("K = 2147483648 is outside [0, 2^31 - 1]"));
  g.K = 2;
  g.batch = 2;
  CHECK_THROWS_WITH(cpu.gemm_mixed(g), Contains("must not overlap"));
  // The float32/float64 entry point refuses bfloat16 and names the one that takes it.
  CHECK_THROWS_WITH(cpu.gemm(DType::BFloat16, false, false, 2, 2, 2, 1.0, nullptr, 2, 0, nullptr, 2, 0, 0.0, nullptr,
                             2, 0, 1, 0),
                    Contains("gemm_mixed"));
}

TEST_CASE("bf16 gemm: on an AMX CPU the process holds the AMX tile-data permission after a product",
          "[bf16][gemm]") {
  NL_SKIP_WITHOUT_ONEDNN();
  if (!cpu::cpu_features().amx_bf16) {
    std::cout << nltest::kSkipMarker << " this CPU has no AMX-BF16 (" << cpu_bf16_info() << ")" << std::endl;
    return;
  }
  matmul(bf16_randn({64, 64}, 1), bf16_randn({64, 64}, 2));
  unsigned long long mask = 0;
  REQUIRE(syscall(SYS_arch_prctl, 0x1022 /* ARCH_GET_XCOMP_PERM */, &mask) == 0);
  CHECK((mask & (1ull << 18)) != 0);  // XFEATURE_XTILEDATA
  CHECK(cpu::request_amx_permission());
  CHECK_THAT(cpu_bf16_info(), Contains("AMX"));
}
