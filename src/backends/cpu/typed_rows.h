#pragma once
// Rows that may be bfloat16 beside float32 compute, for the CPU's fused row kernels (the FFN activation,
// the cross-entropy): elements are read widened (exactly) and written rounded to nearest even inside the
// kernel's own loops — the scalar definitions of tensor/bfloat16.h vectorise — so no separate cast pass
// and no row buffer is needed.
#include <cstdint>
#include <type_traits>

#include "backends/desc.h"
#include "tensor/bfloat16.h"

namespace nl::cpu {

/// Element j of a row of T, as T.
template <typename T>
T load(const T* p, int64_t j) { return p[j]; }
/// Element j of a bfloat16 row (its bits), widened exactly to float32.
inline float load(const uint16_t* p, int64_t j) { return bf16_bits_to_float(p[j]); }
/// Writes v to element j of a row of T.
template <typename T>
void store(T* p, int64_t j, T v) { p[j] = v; }
/// Writes v to element j of a bfloat16 row, rounded to nearest even (NaN stays NaN).
inline void store(uint16_t* p, int64_t j, float v) { p[j] = float_to_bf16_bits(v); }

/// Calls f with d's data as uint16_t* when T is float and d is bfloat16, else as T* (d's dtype is T's).
template <typename T, typename F>
void with_rows(const Desc& d, F&& f) {
  if constexpr (std::is_same_v<T, float>)
    if (d.dtype == DType::BFloat16) return f(static_cast<uint16_t*>(d.data));
  f(static_cast<T*>(d.data));
}

}  // namespace nl::cpu
