#pragma once
// Vectorisable elementary functions for the CPU kernels' inner loops. glibc's expf is a function call
// per element (GCC vectorises it only under -ffast-math), which made the softmax over an 8,000-word
// vocabulary cost as much as a third of the output projection's GEMM. vexp<float> is branch-free
// arithmetic that GCC turns into AVX2/AVX-512 code inside `#pragma omp simd` loops (check with
// -fopt-info-vec or objdump after changing it: one non-vectorisable call leaves the whole loop scalar); vexp<double>
// stays std::exp, so float64 gradchecks keep full accuracy.
#include <cmath>
#include <cstdint>

namespace nl::cpu {

/// e^x for float: Cody–Waite range reduction x = n·ln2 + r (|r| ≤ ln2/2) and Cephes' degree-6
/// polynomial for e^r (cephes/single/expf.c), scaled by 2^n through the exponent bits. Relative error
/// ≤ 3e-7 on [-87.33, 88.37]; returns exactly 0 below -87.33 (e^x under FLT_MIN, and -inf for masked
/// logits) and +inf above 88.37 (e^88.37 ≈ 2.5e38, near FLT_MAX). NaN propagates.
inline float vexp(float x) {
  const float hi = 88.37f, lo = -87.33f;  // 2^n stays a normal float for n in [-126, 127]
  const float xc = x > hi ? hi : (x < lo ? lo : x);
  // n = round(x / ln2), ties to even. std::nearbyint vectorises (vrndscaleps); std::floor(t + 0.5f) would
  // not under GCC's default -ftrapping-math, which left every vexp loop scalar.
  const float n = std::nearbyint(xc * 1.44269504088896341f);
  float r = xc - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = ((int32_t)n + 127) << 23;
  const float y = p * __builtin_bit_cast(float, bits);
  // x itself (not xc) decides the saturated ends, so NaN falls through to y = NaN.
  return x < lo ? 0.0f : (x > hi ? INFINITY : (x != x ? x : y));
}

/// e^x for double: std::exp (full precision for float64 checks).
inline double vexp(double x) { return std::exp(x); }

/// Σ term(i) for i in [0, n) in 16 fixed lanes (lane l sums the i ≡ l (mod 16), the tail goes to the first
/// lanes, the lanes are added in a fixed tree): the order depends on n alone, never on the data's address.
/// `omp simd reduction` may peel a loop for alignment, so the same float32 row summed at two addresses
/// (a batch split across processes) could round differently, and training turns that into visible
/// differences; double sums hid it. GCC vectorises the 16-lane body (one float32 zmm, two for double).
template <typename T, typename Term>
T lane_sum(int64_t n, Term&& term) {
  constexpr int L = 16;
  T acc[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int l = 0; l < L; ++l) acc[l] += term(i + l);
  for (int l = 0; i + l < n; ++l) acc[l] += term(i + l);
  for (int w = L / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0];
}

}  // namespace nl::cpu
