// bfloat16 conversion: every vector path against an arithmetic reference (nearest value by exact
// distance, ties to the even mantissa) over every float32 bit-pattern class, all 2^32 float32 inputs
// against the scalar definition, exact round trips, and the tensor-level casts, fills and printing.
#include "backends/cpu/avx512_intrinsics.h"  // first: GCC 12's intrinsics warnings

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "bf16_test_util.h"
#include "backends/cpu/bf16_convert.h"
#include "backends/cpu/cpu_features.h"
#if defined(__x86_64__)
#include "backends/cpu/bf16_simd.h"
#endif
#include "backends/mixed_precision.h"
#include "tensor/ops.h"

using namespace nl;
using nltest::EnvGuard;
using Catch::Matchers::Contains;

namespace {

float f_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// The value of bfloat16 bits as a double; the pattern just past the largest finite value (exponent all
// ones, mantissa 0 = +-Inf) counts as +-2^128 so that the distance rule decides overflow, as IEEE-754
// rounding does with an unbounded exponent.
double value_unbounded(uint16_t b) {
  if ((b & 0x7fff) == 0x7f80) return (b & 0x8000) ? -std::ldexp(1.0, 128) : std::ldexp(1.0, 128);
  return (double)bf16_bits_to_float(b);
}
// The reference: the nearest bfloat16 by exact distance (doubles hold every float32 and bfloat16 and
// their differences exactly), ties to the even mantissa; NaN gives a quiet NaN with the input's sign and
// top payload; Inf stays Inf.
uint16_t reference_bf16(uint32_t u) {
  const float x = f_of(u);
  if (std::isnan(x)) return (uint16_t)((u >> 16) | 0x0040);
  if (std::isinf(x)) return (uint16_t)(u >> 16);
  const uint16_t lo = (uint16_t)(u >> 16);  // truncation: toward zero in magnitude
  const uint16_t hi = (uint16_t)(lo + 1);   // the next value away from zero (possibly Inf)
  const double dlo = std::fabs((double)x - value_unbounded(lo)), dhi = std::fabs(value_unbounded(hi) - (double)x);
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  return (lo & 1) ? hi : lo;
}

std::vector<cpu::Bf16Path> supported_paths() {
  std::vector<cpu::Bf16Path> v;
  for (auto p : {cpu::Bf16Path::Scalar, cpu::Bf16Path::Avx2, cpu::Bf16Path::Avx512, cpu::Bf16Path::Avx512Bf16})
    if (cpu::bf16_path_supported(p)) v.push_back(p);
  return v;
}

// Runs `n` inputs through path p (odd lengths exercise the vector tails).
std::vector<uint16_t> convert(cpu::Bf16Path p, const std::vector<uint32_t>& bits) {
  std::vector<float> in(bits.size());
  std::memcpy(in.data(), bits.data(), bits.size() * 4);
  std::vector<uint16_t> out(bits.size());
  cpu::float_to_bf16(p, in.data(), out.data(), (int64_t)in.size());
  return out;
}

}  // namespace

TEST_CASE("bf16: the reference rounds the textbook cases", "[bf16][tensor]") {
  CHECK(reference_bf16(0x3f800000) == 0x3f80);  // 1.0 exact
  CHECK(reference_bf16(0x3f808000) == 0x3f80);  // tie between 1 and 1+2^-7: even (1.0)
  CHECK(reference_bf16(0x3f818000) == 0x3f82);  // tie, odd lower neighbour: up
  CHECK(reference_bf16(0x3f808001) == 0x3f81);  // just above the tie
  CHECK(reference_bf16(0x7f7fffff) == 0x7f80);  // FLT_MAX overflows to +Inf
  CHECK(reference_bf16(0x7f7f7fff) == 0x7f7f);  // below the overflow threshold: largest finite
  CHECK(reference_bf16(0x00008000) == 0x0000);  // subnormal tie to even: 0
  CHECK(reference_bf16(0x00018000) == 0x0002);  // subnormal tie, odd lower neighbour: up
  CHECK(reference_bf16(0x807fffff) == 0x8080);  // largest negative subnormal rounds to -FLT_MIN
}

TEST_CASE("bf16: every conversion path matches the reference on every float32 bit-pattern class",
          "[bf16][tensor]") {
  // Every sign, exponent and top mantissa (the 65536 upper halves) with the lower halves that decide
  // rounding: exact, just above 0, below / at / above the tie, largest, and random ones. This covers
  // zeros, subnormals, normals, ties to even both ways, the overflow threshold, Inf and every NaN class.
  std::vector<uint16_t> lows = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff, 0x4000, 0xc000};
  std::mt19937 rng(26);
  for (int i = 0; i < 8; ++i) lows.push_back((uint16_t)rng());
  std::vector<uint32_t> bits;
  for (uint32_t hi = 0; hi < 65536; ++hi)
    for (uint16_t lo : lows) bits.push_back(hi << 16 | lo);
  bits.push_back(0x3f800000);  // one more: an odd length leaves a vector tail
  std::vector<uint16_t> want(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) want[i] = reference_bf16(bits[i]);
  for (cpu::Bf16Path p : supported_paths()) {
    INFO("path " << cpu::bf16_path_name(p));
    const std::vector<uint16_t> got = convert(p, bits);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < bits.size(); ++i)
      if (got[i] != want[i] && bad++ == 0) first = i;
    INFO("first mismatch: " << std::hex << bits[first] << " -> " << got[first] << ", want " << want[first]);
    CHECK(bad == 0);
  }
  // NaN never becomes Inf, on the scalar definition and on the tensor path.
  CHECK(float_to_bf16_bits(f_of(0x7f800001)) == 0x7fc0);
  CHECK(float_to_bf16_bits(f_of(0xff800001)) == 0xffc0);
  const Tensor nan = Tensor::from_vector<float>({f_of(0x7f800001), f_of(0x7fa00000)}, {2}).to(DType::BFloat16);
  CHECK(nan.data<bfloat16>()[0].bits == 0x7fc0);
  CHECK(nan.data<bfloat16>()[1].bits == 0x7fe0);
}

#if defined(__x86_64__)
namespace {
// cpu::round32_avx512bf16 (the kernels' own 32-lane rounding) over n floats, a short tail through a buffer.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16"))) void round32_all(const float* in, uint16_t* out,
                                                                                          int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    _mm512_storeu_si512(out + i, cpu::round32_avx512bf16(_mm512_loadu_ps(in + i), _mm512_loadu_ps(in + i + 16)));
  if (i < n) {
    float tail[32] = {};
    uint16_t r[32];
    std::memcpy(tail, in + i, (size_t)(n - i) * 4);
    _mm512_storeu_si512(r, cpu::round32_avx512bf16(_mm512_loadu_ps(tail), _mm512_loadu_ps(tail + 16)));
    std::memcpy(out + i, r, (size_t)(n - i) * 2);
  }
}
}  // namespace
#endif

TEST_CASE("bf16: all 2^32 float32 inputs convert to the scalar definition's bits on every vector path",
          "[bf16][tensor]") {
  // The reference above pins the scalar definition on every class; this sweep shows the vector paths
  // (and their masked tails: chunks of odd length) and the kernels' 32-lane rounding (where the CPU has
  // AVX512_BF16) agree with it on every single input.
  constexpr int64_t kChunk = (1 << 20) + 7;
  std::vector<float> in(kChunk);
  std::vector<uint16_t> want(kChunk), got(kChunk);
  std::vector<cpu::Bf16Path> paths;
  for (cpu::Bf16Path p : supported_paths())
    if (p != cpu::Bf16Path::Scalar) paths.push_back(p);
  std::vector<uint64_t> mismatches(paths.size(), 0);
  const bool round32 = cpu::cpu_features().avx512_bf16;
  uint64_t mismatches32 = 0;
  for (uint64_t start = 0; start < (1ull << 32); start += kChunk) {
    const int64_t n = (int64_t)std::min<uint64_t>(kChunk, (1ull << 32) - start);
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t u = (uint32_t)(start + (uint64_t)i);
      std::memcpy(&in[i], &u, 4);
      want[i] = float_to_bf16_bits(in[i]);
    }
    for (size_t k = 0; k < paths.size(); ++k) {
      cpu::float_to_bf16(paths[k], in.data(), got.data(), n);
      for (int64_t i = 0; i < n; ++i) mismatches[k] += got[i] != want[i];
    }
#if defined(__x86_64__)
    if (round32) {
      round32_all(in.data(), got.data(), n);
      for (int64_t i = 0; i < n; ++i) mismatches32 += got[i] != want[i];
    }
#endif
  }
  for (size_t k = 0; k < paths.size(); ++k) {
    INFO("path " << cpu::bf16_path_name(paths[k]));
    CHECK(mismatches[k] == 0);
  }
  if (round32) {
    INFO("round32_avx512bf16");
    CHECK(mismatches32 == 0);
  }
}

TEST_CASE("bf16: widening is exact and every bfloat16 survives the round trip on every path", "[bf16][tensor]") {
  std::vector<uint16_t> all(65536 + 3);
  for (size_t i = 0; i < all.size(); ++i) all[i] = (uint16_t)i;
  for (cpu::Bf16Path p : supported_paths()) {
    INFO("path " << cpu::bf16_path_name(p));
    std::vector<float> wide(all.size());
    cpu::bf16_to_float(p, all.data(), wide.data(), (int64_t)all.size());
    std::vector<uint16_t> back(all.size());
    cpu::float_to_bf16(p, wide.data(), back.data(), (int64_t)all.size());
    size_t bad = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      uint32_t u;
      std::memcpy(&u, &wide[i], 4);
      bad += u != (uint32_t)all[i] << 16;  // widening: the bits move up, nothing else
      const bool nan = (all[i] & 0x7fff) > 0x7f80;
      // A quiet NaN comes back as itself; a signalling one comes back quieted, still a NaN.
      bad += nan ? back[i] != (all[i] | 0x0040) : back[i] != all[i];
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("bf16: dtype metadata, parsing and printing", "[bf16][tensor]") {
  CHECK(dtype_size(DType::BFloat16) == 2);
  CHECK(dtype_name(DType::BFloat16) == "bfloat16");
  CHECK(is_floating(DType::BFloat16));
  CHECK(parse_dtype("bf16") == DType::BFloat16);
  CHECK(parse_dtype("bfloat16") == DType::BFloat16);
  CHECK_THROWS_WITH(parse_dtype("f16"), Contains("float32, float64, int64 or bfloat16"));
  const Tensor t = Tensor::from_vector<float>({1.0f, -2.5f, 3.14159f}, {3}).to(DType::BFloat16);
  CHECK(t.str() == "Tensor[3] bfloat16");
  CHECK(t.repr() == "Tensor(shape=[3], dtype=bfloat16, device=cpu) [1, -2.5, 3.14062]");
}

TEST_CASE("bf16: casts, fills and copies on the CPU backend", "[bf16][tensor][threads2]") {
  SECTION("float32 both ways, contiguous and strided, serial and parallel sizes") {
    for (int64_t n : {int64_t(37), int64_t(3 * 65536 + 5)}) {
      manual_seed(3);
      const Tensor x = Tensor::randn({n}) * 1e3;
      const Tensor b = x.to(DType::BFloat16);
      const auto xs = x.to_vector<float>();
      const bfloat16* bp = b.data<bfloat16>();
      size_t bad = 0;
      for (int64_t i = 0; i < n; ++i) bad += bp[i].bits != float_to_bf16_bits(xs[i]);
      CHECK(bad == 0);
      const auto back = b.to(DType::Float32).to_vector<float>();
      for (int64_t i = 0; i < n; ++i) bad += back[i] != bf16_bits_to_float(bp[i].bits);
      CHECK(bad == 0);
    }
    const Tensor m = Tensor::randn({5, 7});
    const Tensor mt = m.transpose(0, 1).to(DType::BFloat16);  // strided source
    CHECK(mt.is_contiguous());
    CHECK(mt.to(DType::Float32).to_vector<float>() == m.to(DType::BFloat16).transpose(0, 1).to(DType::Float32).contiguous().to_vector<float>());
  }
  SECTION("float64 rounds once (no double rounding through float32), int64 via double") {
    // 1 + 2^-8 + 2^-30: float32 rounds it to the tie 1 + 2^-8, which would then round to even (1.0);
    // the value lies above the tie, so the correctly rounded bfloat16 is 1 + 2^-7.
    const double d = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
    const Tensor b = Tensor::from_vector<double>({d, -d, 1e300, -1e-300, 3.0}, {5}).to(DType::BFloat16);
    const bfloat16* p = b.data<bfloat16>();
    CHECK(p[0].bits == 0x3f81);
    CHECK(p[1].bits == 0xbf81);
    CHECK(p[2].bits == 0x7f80);  // beyond the range: +Inf
    CHECK(p[3].bits == 0x8000);  // below the smallest subnormal: -0
    CHECK(p[4].bits == 0x4040);
    CHECK(b.to(DType::Float64).to_vector<double>()[4] == 3.0);
    const Tensor i = Tensor::from_vector<int64_t>({257, -3, 1 << 20}, {3}).to(DType::BFloat16);
    CHECK(i.to_vector<double>() == std::vector<double>{256.0, -3.0, 1048576.0});  // 257: tie -> even 256
    CHECK(i.to(DType::Int64).to_vector<int64_t>() == std::vector<int64_t>{256, -3, 1 << 20});
  }
  SECTION("fill and bfloat16 to bfloat16 copies") {
    Tensor z = Tensor::zeros({4, 3}, DType::BFloat16);
    CHECK(z.to_vector<float>() == std::vector<float>(12, 0.0f));
    z.fill_(1.0 / 3.0);
    CHECK(z.data<bfloat16>()[5].bits == 0x3eab);  // 1/3 = 0x3eaaaaab in float32 -> 0x3eab
    Tensor w = Tensor::full({3, 4}, -1.0, DType::BFloat16);
    w.copy_(z.transpose(0, 1));
    CHECK(w.to_vector<float>() == z.transpose(0, 1).contiguous().to_vector<float>());
    CHECK(z.clone().to_vector<float>() == z.to_vector<float>());
  }
}

TEST_CASE("bf16: the fallback switch selects the integer conversion path with the same bits", "[bf16][tensor]") {
  if (!cpu_native_bf16()) {
    CHECK(cpu::bf16_convert_path() != cpu::Bf16Path::Avx512Bf16);
    return;
  }
  CHECK(cpu::bf16_convert_path() == cpu::Bf16Path::Avx512Bf16);
  manual_seed(5);
  const Tensor x = Tensor::randn({1001});
  const Tensor native = x.to(DType::BFloat16);
  EnvGuard g("NORMLAB_BF16_FALLBACK", "1");
  CHECK_FALSE(cpu_native_bf16());
  CHECK(cpu::bf16_convert_path() != cpu::Bf16Path::Avx512Bf16);
  const Tensor emulated = x.to(DType::BFloat16);
  CHECK(std::memcmp(native.data<bfloat16>(), emulated.data<bfloat16>(), 1001 * 2) == 0);
}

TEST_CASE("bf16: ops that do not take bfloat16 say so, naming the op", "[bf16][tensor]") {
  const Tensor b = Tensor::ones({2, 3}, DType::BFloat16);
  CHECK_THROWS_WITH(exp(b), Contains("exp: does not take bfloat16") && Contains(".to(DType::Float32)"));
  CHECK_THROWS_WITH(b + b, Contains("add: does not take bfloat16"));
  CHECK_THROWS_WITH(sum(b, {1}, false), Contains("sum: does not take bfloat16"));
  CHECK_THROWS_WITH(softmax(b), Contains("softmax: does not take bfloat16"));
  CHECK_THROWS_WITH(relu(b), Contains("relu: does not take bfloat16"));
  CHECK_THROWS_WITH(b + Tensor::ones({2, 3}), Contains("dtype mismatch (bfloat16 vs float32)"));
  // The kernels refuse too, before any loop, when called directly.
  Tensor out = Tensor::empty({2, 3}, DType::BFloat16);
  CHECK_THROWS_WITH(backend_for(DeviceType::CPU).binary(BinaryOp::Mul, out.desc(), b.desc(), b.desc()),
                    Contains("mul: does not take bfloat16"));
}
