#pragma once
// Vectorisable elementary functions for the CPU kernels' inner loops. glibc's expf is a function call
// per element (GCC vectorises it only under -ffast-math), which made the softmax over an 8,000-word
// vocabulary cost as much as a third of the output projection's GEMM. vexp<float> is branch-free
// arithmetic that GCC turns into AVX2/AVX-512 code inside `#pragma omp simd` loops (check with
// -fopt-info-vec or objdump after changing it: one non-vectorisable call leaves the whole loop scalar); vexp<double>
// stays std::exp, so float64 gradchecks keep full accuracy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#if !defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
#define NL_LANES_AVX2 1  // the row sums below on AVX2 registers (builds without AVX-512)
#endif

namespace nl::cpu {

#if defined(__AVX2__)
/// The first r (clamped to [0, 8]) of 8 float lanes: a mask for vmaskmovps and blends.
inline __m256i lanes8(int64_t r) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)std::clamp<int64_t>(r, 0, 8)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

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

#if defined(__AVX512F__)
/// lane_tree of 16 float lanes held in a register.
/// Full-width shuffles (GCC's vector extension; the half-register extract intrinsics warn of an
/// uninitialised operand where GCC 12 inlines them, GCC bug 105593) bring lane l + w onto lane l; the lanes
/// above w then hold sums nobody reads.
inline float lane_tree(__m512 v) {
  v += __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);  // w = 8
  v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7);              // w = 4
  v += __builtin_shufflevector(v, v, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);              // w = 2
  v += __builtin_shufflevector(v, v, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);              // w = 1
  return v[0];
}
#elif defined(NL_LANES_AVX2)
/// lane_tree of 16 float lanes held in two registers (lanes 0-7 and 8-15): the same pairs in the same order.
inline float lane_tree(__m256 lo, __m256 hi) {
  const __m256 v = _mm256_add_ps(lo, hi);                                                // w = 8
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));         // w = 4
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));                                                // w = 2
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_shuffle_ps(q, q, _MM_SHUFFLE(1, 1, 1, 1))));  // w = 1
}
/// `sum` in the lanes of k, `acc` (its bits, -0 included) in the others: a tail added to the first lanes
/// only, as lane_sum's scalar tail.
inline __m256 in_lanes(__m256 acc, __m256 sum, __m256i k) { return _mm256_blendv_ps(acc, sum, _mm256_castsi256_ps(k)); }
#endif
/// The 16 lanes of lane_sum added in its fixed tree: lane l += lane l + w for w = 8, 4, 2, 1; lane 0 is the
/// sum. For float with AVX-512 the tree runs on the register's halves (the same pairs in the same order): as a
/// loop over the array, GCC stored the register and read its halves back, each read stalling on the store
/// (the attention's softmax backward rows: 0.088 -> 0.049 ms per [64 x 4 x 32 x 32] call, Zen 4).
template <typename T>
inline T lane_tree(T (&acc)[16]) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) return lane_tree(_mm512_loadu_ps(acc));
#elif defined(NL_LANES_AVX2)
  if constexpr (std::is_same_v<T, float>) return lane_tree(_mm256_loadu_ps(acc), _mm256_loadu_ps(acc + 8));
#endif
  for (int w = 8; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0];
}

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
  return lane_tree(acc);
}

/// lane_sum(n, a[j]) with the same lanes, order and bits. For float with AVX-512 the row is read by vector
/// loads and the tail by one masked load, the lanes past n left as they are: no scalar tail, whose stores
/// into the lanes stalled the tree's vector read (rows of a length that is not a multiple of 16 cost 3-4x
/// more per element). With AVX2 (no AVX-512) likewise on two 8-lane registers, the tail by vmaskmovps and a
/// blend that adds it to the first lanes only.
template <typename T>
inline T lane_sum_of(int64_t n, const T* a) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) acc = _mm512_add_ps(acc, _mm512_loadu_ps(a + i));
    if (i < n) {
      const __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
      acc = _mm512_mask_add_ps(acc, k, acc, _mm512_maskz_loadu_ps(k, a + i));
    }
    return lane_tree(acc);
  }
#elif defined(NL_LANES_AVX2)
  if constexpr (std::is_same_v<T, float>) {
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();  // lanes 0-7 and 8-15
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      lo = _mm256_add_ps(lo, _mm256_loadu_ps(a + i));
      hi = _mm256_add_ps(hi, _mm256_loadu_ps(a + i + 8));
    }
    if (i < n) {
      const __m256i kl = lanes8(n - i), kh = lanes8(n - i - 8);
      lo = in_lanes(lo, _mm256_add_ps(lo, _mm256_maskload_ps(a + i, kl)), kl);
      hi = in_lanes(hi, _mm256_add_ps(hi, _mm256_maskload_ps(a + i + 8, kh)), kh);
    }
    return lane_tree(lo, hi);
  }
#endif
  return lane_sum<T>(n, [&](int64_t j) { return a[j]; });
}

/// Σ a[j] in double: lane_sum<double>(n, (double)a[j]) with the same lanes, order and bits (the 16 lanes,
/// then the tree). A row mean that does not depend on the row's address, unlike `omp simd reduction`,
/// which GCC also finished by storing the vector and adding its lanes one by one (a 16-add chain that
/// bound the LayerNorm forward's rows). For float with AVX-512 the lanes live in two registers (halves
/// widened by vcvtps2pd), the tail by masked loads; with AVX2 in four registers of 4 double lanes.
template <typename T>
inline double lane_sum_double(int64_t n, const T* a) {
#if defined(__AVX512F__) && defined(__AVX512VL__)
  if constexpr (std::is_same_v<T, float>) {
    // The widening as GCC's vector conversion: _mm512_cvtps_pd warns of an uninitialised operand where
    // GCC 12 inlines it (GCC bug 105593, as the extracts of lane_tree).
    auto wide = [](__m256 v) { return (__m512d)__builtin_convertvector((__v8sf)v, __v8df); };
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();  // lanes 0-7 and 8-15
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      lo = _mm512_add_pd(lo, wide(_mm256_loadu_ps(a + i)));
      hi = _mm512_add_pd(hi, wide(_mm256_loadu_ps(a + i + 8)));
    }
    if (i < n) {
      const int64_t r = n - i;
      const __mmask8 kl = (__mmask8)((1u << (r < 8 ? r : 8)) - 1), kh = (__mmask8)(r > 8 ? (1u << (r - 8)) - 1 : 0);
      lo = _mm512_mask_add_pd(lo, kl, lo, wide(_mm256_maskz_loadu_ps(kl, a + i)));
      hi = _mm512_mask_add_pd(hi, kh, hi, wide(_mm256_maskz_loadu_ps(kh, a + i + 8)));
    }
    __m512d v = lo + hi;                                         // w = 8
    v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7);  // w = 4
    v += __builtin_shufflevector(v, v, 2, 3, 2, 3, 2, 3, 2, 3);  // w = 2
    v += __builtin_shufflevector(v, v, 1, 1, 1, 1, 1, 1, 1, 1);  // w = 1
    return v[0];
  }
#elif defined(NL_LANES_AVX2)
  if constexpr (std::is_same_v<T, float>) {
    // Lanes 0-3, 4-7, 8-11, 12-15 in four registers, each float half widened by vcvtps2pd.
    __m256d d[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    auto add16 = [&](__m256 x0, __m256 x1, int64_t r) {  // r: lanes present (16 in the body)
      const __m128 q[4] = {_mm256_castps256_ps128(x0), _mm256_extractf128_ps(x0, 1), _mm256_castps256_ps128(x1),
                           _mm256_extractf128_ps(x1, 1)};
      for (int g = 0; g < 4; ++g) {
        const __m256d sum = _mm256_add_pd(d[g], _mm256_cvtps_pd(q[g]));
        if (r >= 16) {
          d[g] = sum;
        } else {
          const __m256i k = _mm256_cmpgt_epi64(_mm256_set1_epi64x(std::clamp<int64_t>(r - 4 * g, 0, 4)),
                                               _mm256_setr_epi64x(0, 1, 2, 3));
          d[g] = _mm256_blendv_pd(d[g], sum, _mm256_castsi256_pd(k));
        }
      }
    };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) add16(_mm256_loadu_ps(a + i), _mm256_loadu_ps(a + i + 8), 16);
    if (i < n)
      add16(_mm256_maskload_ps(a + i, lanes8(n - i)), _mm256_maskload_ps(a + i + 8, lanes8(n - i - 8)), n - i);
    const __m256d v = _mm256_add_pd(_mm256_add_pd(d[0], d[2]), _mm256_add_pd(d[1], d[3]));  // w = 8, then w = 4
    const __m128d q = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));     // w = 2
    return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));                             // w = 1
  }
#endif
  return lane_sum<double>(n, [&](int64_t j) { return (double)a[j]; });
}

/// lane_sum(n, a[j] * b[j]) likewise. Each lane adds a[j]·b[j] as one fused multiply-add, as GCC contracts
/// the generic loop wherever the target has FMA (AVX-512 implies it), so the same bits as lane_sum there; the
/// AVX-512 and AVX2 + FMA paths use vfmadd explicitly.
template <typename T>
inline T lane_dot(int64_t n, const T* a, const T* b) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc);
    if (i < n) {
      const __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
      acc = _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps(k, a + i), _mm512_maskz_loadu_ps(k, b + i), acc, k);
    }
    return lane_tree(acc);
  }
#elif defined(NL_LANES_AVX2)
  if constexpr (std::is_same_v<T, float>) {
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      lo = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), lo);
      hi = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), hi);
    }
    if (i < n) {
      const __m256i kl = lanes8(n - i), kh = lanes8(n - i - 8);
      lo = in_lanes(lo, _mm256_fmadd_ps(_mm256_maskload_ps(a + i, kl), _mm256_maskload_ps(b + i, kl), lo), kl);
      hi = in_lanes(hi, _mm256_fmadd_ps(_mm256_maskload_ps(a + i + 8, kh), _mm256_maskload_ps(b + i + 8, kh), hi), kh);
    }
    return lane_tree(lo, hi);
  }
#endif
  return lane_sum<T>(n, [&](int64_t j) { return a[j] * b[j]; });
}

}  // namespace nl::cpu
