#pragma once
// Element types of normlab tensors. Mixing dtypes in one op is an error (no silent casts).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace nl {

/// Element type: float32 (default for training), float64 (CPU gradient checks), int64 (ids, labels).
enum class DType : uint8_t { Float32, Float64, Int64 };

/// Bytes per element of `t`.
constexpr size_t dtype_size(DType t) { return t == DType::Float32 ? 4 : 8; }
/// True for float32 and float64.
constexpr bool is_floating(DType t) { return t != DType::Int64; }
/// "float32", "float64" or "int64".
inline std::string dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    default: return "int64";
  }
}
/// Parses "float32"/"f32", "float64"/"f64"/"double", "int64"/"i64"; throws std::invalid_argument.
DType parse_dtype(const std::string& s);

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };

/// Calls `f(T{})` with T the C++ type of `t` (float, double or int64_t).
template <typename F> decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    default: return f(int64_t{});
  }
}
/// Like dispatch_dtype but only float types; throws std::invalid_argument naming `op` for int64.
template <typename F> decltype(auto) dispatch_floating(DType t, const char* op, F&& f) {
  if (t == DType::Float32) return f(float{});
  if (t == DType::Float64) return f(double{});
  throw std::invalid_argument(std::string(op) + ": needs a float32 or float64 tensor, got int64");
}

}  // namespace nl
