#pragma once
// Element types of normlab tensors. Mixing dtypes in one op is an error (no silent casts).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace nl {

/// Element type: float32 (default for training), float64 (CPU gradient checks), int64 (ids, labels).
enum class DType : uint8_t { Float32, Float64, Int64 };

// The switches below list every DType and have no default, so adding a dtype makes -Wswitch name
// each place that must learn it; the throw after a switch catches a value outside the enum.

/// Bytes per element of `t`; throws std::invalid_argument for a value outside the enum.
constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int64: return 8;
  }
  throw std::invalid_argument("dtype_size: invalid DType value " + std::to_string(static_cast<int>(t)));
}
/// True for float32 and float64; throws std::invalid_argument for a value outside the enum.
constexpr bool is_floating(DType t) {
  switch (t) {
    case DType::Float32:
    case DType::Float64: return true;
    case DType::Int64: return false;
  }
  throw std::invalid_argument("is_floating: invalid DType value " + std::to_string(static_cast<int>(t)));
}
/// "float32", "float64" or "int64"; throws std::invalid_argument for a value outside the enum.
inline std::string dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
  }
  throw std::invalid_argument("dtype_name: invalid DType value " + std::to_string(static_cast<int>(t)));
}
/// Parses "float32"/"f32", "float64"/"f64"/"double", "int64"/"i64"; throws std::invalid_argument.
DType parse_dtype(const std::string& s);

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };

/// Calls `f(T{})` with T the C++ type of `t` (float, double or int64_t); throws
/// std::invalid_argument for a value outside the enum.
template <typename F> decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Int64: return f(int64_t{});
  }
  throw std::invalid_argument("dispatch_dtype: invalid DType value " + std::to_string(static_cast<int>(t)));
}
/// Like dispatch_dtype but only float types; throws std::invalid_argument naming `op` for int64.
template <typename F> decltype(auto) dispatch_floating(DType t, const char* op, F&& f) {
  if (t == DType::Float32) return f(float{});
  if (t == DType::Float64) return f(double{});
  throw std::invalid_argument(std::string(op) + ": expects a float tensor, got " + dtype_name(t) +
                              "; convert with .to(DType::Float32)");
}

}  // namespace nl
