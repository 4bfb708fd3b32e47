// float32 <-> bfloat16 conversion kernels of the CPU backend (bf16_convert.h) and the bfloat16 copy /
// fill kernels built on them. The vector paths are compiled with target attributes and chosen at run
// time, so a build without -march=native still uses them; all give the bits of float_to_bf16_bits.
#include "backends/cpu/avx512_intrinsics.h"  // first: GCC 12's intrinsics warnings

#include <stdexcept>
#include <string>
#include <type_traits>

#include "backends/cpu/bf16_convert.h"
#include "backends/cpu/bf16_simd.h"
#include "backends/cpu/cpu_features.h"
#include "backends/cpu/strided.h"
#include "backends/mixed_precision.h"
#include "tensor/bfloat16.h"

namespace nl::cpu {
namespace {

// ---- scalar ----
void to_bf16_scalar(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = float_to_bf16_bits(in[i]);
}
void to_f32_scalar(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_bits_to_float(in[i]);
}

// ---- AVX2: the integer rounding of float_to_bf16_bits on 8 lanes ----
__attribute__((target("avx2,fma"))) inline __m256i round_avx2(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
  // |x| > Inf as integers means NaN (both sides non-negative, so the signed compare is exact).
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  r = _mm256_blendv_epi8(r, _mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), nan);
  return _mm256_srli_epi32(r, 16);
}
__attribute__((target("avx2,fma"))) void to_bf16_avx2(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i lo = round_avx2(_mm256_loadu_ps(in + i)), hi = round_avx2(_mm256_loadu_ps(in + i + 8));
    // packus interleaves 128-bit lanes: [lo0 hi0 lo1 hi1]; the permute restores [lo0 lo1 hi0 hi1].
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), packed);
  }
  to_bf16_scalar(in + i, out + i, n - i);
}
__attribute__((target("avx2,fma"))) void to_f32_avx2(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_slli_epi32(w, 16));
  }
  to_f32_scalar(in + i, out + i, n - i);
}

// ---- AVX-512: round_avx512 (bf16_simd.h) on 16 lanes, masked tails ----
__attribute__((target("avx512f,avx512bw,avx512vl"))) void to_bf16_avx512(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), round_avx512(_mm512_loadu_ps(in + i)));
  if (i < n) {
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(out + i, m, round_avx512(_mm512_maskz_loadu_ps(m, in + i)));
  }
}
__attribute__((target("avx512f,avx512bw,avx512vl"))) void to_f32_avx512(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)));
    _mm512_storeu_si512(out + i, _mm512_slli_epi32(w, 16));
  }
  if (i < n) {
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, in + i));
    _mm512_mask_storeu_epi32(out + i, m, _mm512_slli_epi32(w, 16));
  }
}

// ---- AVX512_BF16: round_avx512bf16 (bf16_simd.h) ----
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void to_bf16_avx512bf16(const float* in,
                                                                                      uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), round_avx512bf16(_mm512_loadu_ps(in + i)));
  if (i < n) {
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(out + i, m, round_avx512bf16(_mm512_maskz_loadu_ps(m, in + i)));
  }
}

void check_path(Bf16Path p) {
  if (!bf16_path_supported(p))
    throw std::invalid_argument(std::string("bfloat16 conversion: this CPU cannot run the ") + bf16_path_name(p) +
                                " path");
}

}  // namespace

const char* bf16_path_name(Bf16Path p) {
  switch (p) {
    case Bf16Path::Scalar: return "scalar";
    case Bf16Path::Avx2: return "avx2";
    case Bf16Path::Avx512: return "avx512";
    case Bf16Path::Avx512Bf16: return "avx512_bf16";
  }
  return "unknown";
}

bool bf16_path_supported(Bf16Path p) {
  const CpuFeatures& f = cpu_features();
  switch (p) {
    case Bf16Path::Scalar: return true;
    case Bf16Path::Avx2: return f.avx2;
    case Bf16Path::Avx512: return f.avx512;
    case Bf16Path::Avx512Bf16: return f.avx512_bf16;
  }
  return false;
}

Bf16Path bf16_convert_path() {
  const CpuFeatures& f = cpu_features();
  if (f.avx512_bf16 && cpu_native_bf16()) return Bf16Path::Avx512Bf16;
  if (f.avx512) return Bf16Path::Avx512;
  if (f.avx2) return Bf16Path::Avx2;
  return Bf16Path::Scalar;
}

void float_to_bf16(Bf16Path p, const float* in, uint16_t* out, int64_t n) {
  check_path(p);
  switch (p) {
    case Bf16Path::Scalar: return to_bf16_scalar(in, out, n);
    case Bf16Path::Avx2: return to_bf16_avx2(in, out, n);
    case Bf16Path::Avx512: return to_bf16_avx512(in, out, n);
    case Bf16Path::Avx512Bf16: return to_bf16_avx512bf16(in, out, n);
  }
}
void bf16_to_float(Bf16Path p, const uint16_t* in, float* out, int64_t n) {
  check_path(p);
  switch (p) {
    case Bf16Path::Scalar: return to_f32_scalar(in, out, n);
    case Bf16Path::Avx2: return to_f32_avx2(in, out, n);
    case Bf16Path::Avx512:
    case Bf16Path::Avx512Bf16: return to_f32_avx512(in, out, n);  // widening is a shift: no bf16 instruction needed
  }
}
void float_to_bf16(const float* in, uint16_t* out, int64_t n) { float_to_bf16(bf16_convert_path(), in, out, n); }
void bf16_to_float(const uint16_t* in, float* out, int64_t n) { bf16_to_float(bf16_convert_path(), in, out, n); }

void copy_bf16(const Desc& out, const Desc& in) {
  const Desc* ops[2] = {&out, &in};
  const Bf16Path path = bf16_convert_path();  // decided once, outside the parallel region
  if (out.dtype == DType::BFloat16 && in.dtype == DType::BFloat16) {
    for_each_row<2>(ops, [&](int64_t n, char** p, const int64_t* s) {
      uint16_t* o = reinterpret_cast<uint16_t*>(p[0]);
      const uint16_t* x = reinterpret_cast<const uint16_t*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i * s[0]] = x[i * s[1]];
    });
  } else if (out.dtype == DType::BFloat16) {
    dispatch_dtype(in.dtype, "copy to bfloat16", [&](auto tag) {
      using T = decltype(tag);
      for_each_row<2>(ops, [&](int64_t n, char** p, const int64_t* s) {
        uint16_t* o = reinterpret_cast<uint16_t*>(p[0]);
        const T* x = reinterpret_cast<const T*>(p[1]);
        if constexpr (std::is_same_v<T, float>) {
          if (s[0] == 1 && s[1] == 1) return float_to_bf16(path, x, o, n);
          for (int64_t i = 0; i < n; ++i) o[i * s[0]] = float_to_bf16_bits(x[i * s[1]]);
        } else {
          for (int64_t i = 0; i < n; ++i) o[i * s[0]] = double_to_bf16_bits((double)x[i * s[1]]);
        }
      });
    });
  } else {
    dispatch_dtype(out.dtype, "copy from bfloat16", [&](auto tag) {
      using T = decltype(tag);
      for_each_row<2>(ops, [&](int64_t n, char** p, const int64_t* s) {
        T* o = reinterpret_cast<T*>(p[0]);
        const uint16_t* x = reinterpret_cast<const uint16_t*>(p[1]);
        if constexpr (std::is_same_v<T, float>) {
          if (s[0] == 1 && s[1] == 1) return bf16_to_float(path, x, o, n);
        }
        for (int64_t i = 0; i < n; ++i) o[i * s[0]] = static_cast<T>(bf16_bits_to_float(x[i * s[1]]));
      });
    });
  }
}

void fill_bf16(const Desc& out, double value) {
  const uint16_t v = double_to_bf16_bits(value);
  const Desc* ops[1] = {&out};
  for_each_row<1>(ops, [&](int64_t n, char** p, const int64_t* s) {
    uint16_t* o = reinterpret_cast<uint16_t*>(p[0]);
    for (int64_t i = 0; i < n; ++i) o[i * s[0]] = v;
  });
}

}  // namespace nl::cpu
