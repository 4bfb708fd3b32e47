// CPU elementwise kernels: fill, copy/cast, unary, binary, where (random fills: cpu_random.cpp;
// dropout: cpu_dropout.cpp).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "backends/cpu/bf16_convert.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/profiler.h"
#include "backends/cpu/strided.h"
#include "backends/elementwise_math.h"

namespace nl {
using cpu::for_each_row;


void CpuBackend::fill(const Desc& out, double value) {
  prof::Scope prof_scope(prof::Cat::Elementwise);
  if (out.dtype == DType::BFloat16) return cpu::fill_bf16(out, value);
  const Desc* ops[1] = {&out};
  dispatch_dtype(out.dtype, "fill", [&](auto tag) {
    using T = decltype(tag);
    T v = static_cast<T>(value);
    for_each_row<1>(ops, [&](int64_t n, char** p, const int64_t* s) {
      T* o = reinterpret_cast<T*>(p[0]);
      for (int64_t i = 0; i < n; ++i) o[i * s[0]] = v;
    });
  });
}

void CpuBackend::copy(const Desc& out, const Desc& in) {
  prof::Scope prof_scope(prof::Cat::Elementwise);
  if (out.dtype == DType::BFloat16 || in.dtype == DType::BFloat16) return cpu::copy_bf16(out, in);
  const Desc* ops[2] = {&out, &in};
  dispatch_dtype(out.dtype, "copy", [&](auto to) {
    using TO = decltype(to);
    dispatch_dtype(in.dtype, "copy", [&](auto ti) {
      using TI = decltype(ti);
      for_each_row<2>(ops, [&](int64_t n, char** p, const int64_t* s) {
        TO* o = reinterpret_cast<TO*>(p[0]);
        const TI* x = reinterpret_cast<const TI*>(p[1]);
        if (s[0] == 1 && s[1] == 1) {
          for (int64_t i = 0; i < n; ++i) o[i] = static_cast<TO>(x[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) o[i * s[0]] = static_cast<TO>(x[i * s[1]]);
        }
      });
    });
  });
}

void CpuBackend::unary(UnaryOp op, const Desc& out, const Desc& in, double a, double b) {
  prof::Scope prof_scope(prof::Cat::Elementwise);
  // Checked here, outside for_each_row's parallel region (an exception there would terminate).
  if (!is_floating(out.dtype) && !unary_supports_int(op))
    throw std::invalid_argument(std::string(unary_name(op)) + ": expects a float tensor, got " +
                                dtype_name(out.dtype) + "; convert with .to(DType::Float32)");
  const Desc* ops[2] = {&out, &in};
  dispatch_dtype(out.dtype, unary_name(op), [&](auto tag) {
    using T = decltype(tag);
    for_each_row<2>(ops, [&](int64_t n, char** p, const int64_t* s) {
      T* o = reinterpret_cast<T*>(p[0]);
      const T* x = reinterpret_cast<const T*>(p[1]);
      if (s[0] == 1 && s[1] == 1) {
        switch (op) {  // hot cases written out so the compiler vectorises them
          case UnaryOp::Relu:
            for (int64_t i = 0; i < n; ++i) o[i] = x[i] < T(0) ? T(0) : x[i];  // NaN stays NaN
            return;
          case UnaryOp::Affine:
            for (int64_t i = 0; i < n; ++i) o[i] = T(a) * x[i] + T(b);
            return;
          case UnaryOp::Square:
            for (int64_t i = 0; i < n; ++i) o[i] = x[i] * x[i];
            return;
          default:
            for (int64_t i = 0; i < n; ++i) o[i] = unary_apply<T>(op, x[i], a, b);
            return;
        }
      }
      for (int64_t i = 0; i < n; ++i) o[i * s[0]] = unary_apply<T>(op, x[i * s[1]], a, b);
    });
  });
}

void CpuBackend::binary(BinaryOp op, const Desc& out, const Desc& x, const Desc& y) {
  prof::Scope prof_scope(prof::Cat::Elementwise);
  const Desc* ops[3] = {&out, &x, &y};
  dispatch_dtype(out.dtype, binary_name(op), [&](auto tag) {
    using T = decltype(tag);
    for_each_row<3>(ops, [&](int64_t n, char** p, const int64_t* s) {
      T* o = reinterpret_cast<T*>(p[0]);
      const T* a = reinterpret_cast<const T*>(p[1]);
      const T* b = reinterpret_cast<const T*>(p[2]);
      if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
        switch (op) {
          case BinaryOp::Add: for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i]; return;
          case BinaryOp::Sub: for (int64_t i = 0; i < n; ++i) o[i] = a[i] - b[i]; return;
          case BinaryOp::Mul: for (int64_t i = 0; i < n; ++i) o[i] = a[i] * b[i]; return;
          case BinaryOp::Div: for (int64_t i = 0; i < n; ++i) o[i] = a[i] / b[i]; return;
          case BinaryOp::ReluGrad: for (int64_t i = 0; i < n; ++i) o[i] = b[i] <= T(0) ? T(0) : a[i]; return;
          default: for (int64_t i = 0; i < n; ++i) o[i] = binary_apply<T>(op, a[i], b[i]); return;
        }
      }
      if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
        const T bv = b[0];
        switch (op) {
          case BinaryOp::Add: for (int64_t i = 0; i < n; ++i) o[i] = a[i] + bv; return;
          case BinaryOp::Mul: for (int64_t i = 0; i < n; ++i) o[i] = a[i] * bv; return;
          default: for (int64_t i = 0; i < n; ++i) o[i] = binary_apply<T>(op, a[i], bv); return;
        }
      }
      for (int64_t i = 0; i < n; ++i) o[i * s[0]] = binary_apply<T>(op, a[i * s[1]], b[i * s[2]]);
    });
  });
}

void CpuBackend::where(const Desc& out, const Desc& cond, const Desc& x, const Desc& y) {
  prof::Scope prof_scope(prof::Cat::Elementwise);
  const Desc* ops[4] = {&out, &cond, &x, &y};
  dispatch_dtype(out.dtype, "where", [&](auto tag) {
    using T = decltype(tag);
    dispatch_dtype(cond.dtype, "where (condition)", [&](auto ctag) {
      using C = decltype(ctag);
      for_each_row<4>(ops, [&](int64_t n, char** p, const int64_t* s) {
        T* o = reinterpret_cast<T*>(p[0]);
        const C* c = reinterpret_cast<const C*>(p[1]);
        const T* a = reinterpret_cast<const T*>(p[2]);
        const T* b = reinterpret_cast<const T*>(p[3]);
        if (s[0] == 1 && s[1] == 0) {  // one condition for the row (a broadcast mask): a fill or a copy
          const T* src = c[0] != C(0) ? a : b;
          const int64_t ss = c[0] != C(0) ? s[2] : s[3];
          if (ss == 0) std::fill(o, o + n, src[0]);
          else if (ss == 1) std::copy(src, src + n, o);
          else for (int64_t i = 0; i < n; ++i) o[i] = src[i * ss];
          return;
        }
        if (s[0] == 1 && s[1] == 1 && (s[2] == 0 || s[2] == 1) && (s[3] == 0 || s[3] == 1)) {  // contiguous or broadcast values: vectorised
          auto pick = [&](auto sa, auto sb) {
            for (int64_t i = 0; i < n; ++i) o[i] = c[i] != C(0) ? a[i * sa] : b[i * sb];
          };
          using One = std::integral_constant<int64_t, 1>;
          using Zero = std::integral_constant<int64_t, 0>;
          if (s[2] == 1 && s[3] == 1) pick(One{}, One{});
          else if (s[2] == 1) pick(One{}, Zero{});
          else if (s[3] == 1) pick(Zero{}, One{});
          else pick(Zero{}, Zero{});
          return;
        }
        for (int64_t i = 0; i < n; ++i) o[i * s[0]] = c[i * s[1]] != C(0) ? a[i * s[2]] : b[i * s[3]];
      });
    });
  });
}

}  // namespace nl
