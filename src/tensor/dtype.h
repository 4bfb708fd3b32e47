#pragma once
// Element types of normlab tensors. Mixing dtypes in one op is an error (no silent casts).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "tensor/bfloat16.h"

namespace nl {

/// Element type: float32 (default for training), float64 (CPU gradient checks), int64 (ids, labels),
/// bfloat16 (mixed precision: the operands of matrix products; docs/mixed-precision.md). bfloat16 is a
/// storage and product type: casts, fills, copies, printing and products take it; the other kernels
/// refuse it naming the op (dispatch_dtype / dispatch_floating below).
enum class DType : uint8_t { Float32, Float64, Int64, BFloat16 };

// The switches below list every DType and have no default, so adding a dtype makes -Wswitch name
// each place that must learn it; the throw after a switch catches a value outside the enum.

/// Bytes per element of `t`; throws std::invalid_argument for a value outside the enum.
constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int64: return 8;
    case DType::BFloat16: return 2;
  }
  throw std::invalid_argument("dtype_size: invalid DType value " + std::to_string(static_cast<int>(t)));
}
/// True for the floating-point dtypes (float32, float64, bfloat16: the ones that may require
/// gradients); throws std::invalid_argument for a value outside the enum. Whether a kernel computes in
/// a dtype is the kernel's business (dispatch_floating takes float32 and float64 only).
constexpr bool is_floating(DType t) {
  switch (t) {
    case DType::Float32:
    case DType::Float64:
    case DType::BFloat16: return true;
    case DType::Int64: return false;
  }
  throw std::invalid_argument("is_floating: invalid DType value " + std::to_string(static_cast<int>(t)));
}
/// "float32", "float64", "int64" or "bfloat16"; throws std::invalid_argument for a value outside the enum.
inline std::string dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::BFloat16: return "bfloat16";
  }
  throw std::invalid_argument("dtype_name: invalid DType value " + std::to_string(static_cast<int>(t)));
}
/// Parses "float32"/"f32", "float64"/"f64"/"double", "int64"/"i64", "bfloat16"/"bf16"; throws
/// std::invalid_argument.
DType parse_dtype(const std::string& s);

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::BFloat16; };

/// The std::invalid_argument an op throws for a bfloat16 tensor it does not take, naming the op and the fix.
inline std::invalid_argument no_bf16_error(const char* op) {
  return std::invalid_argument(std::string(op) +
                               ": does not take bfloat16 tensors (bfloat16 is for matrix products and casts); "
                               "convert with .to(DType::Float32)");
}

/// Calls `f(T{})` with T the C++ type of `t` (float, double or int64_t). Throws
/// std::invalid_argument naming `op` for bfloat16 (no_bf16_error: kernels that take bfloat16 handle it
/// before dispatching), and for a value outside the enum.
template <typename F> decltype(auto) dispatch_dtype(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Int64: return f(int64_t{});
    case DType::BFloat16: throw no_bf16_error(op);
  }
  throw std::invalid_argument(std::string(op) + ": invalid DType value " + std::to_string(static_cast<int>(t)));
}
/// Like dispatch_dtype but only float32 / float64; throws std::invalid_argument naming `op` for int64
/// and bfloat16.
template <typename F> decltype(auto) dispatch_floating(DType t, const char* op, F&& f) {
  if (t == DType::Float32) return f(float{});
  if (t == DType::Float64) return f(double{});
  if (t == DType::BFloat16) throw no_bf16_error(op);
  throw std::invalid_argument(std::string(op) + ": expects a float tensor, got " + dtype_name(t) +
                              "; convert with .to(DType::Float32)");
}

}  // namespace nl
