#pragma once
// Helpers shared by the tests of src/nn: float64 random leaves, element comparisons, gradcheck macro.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/gradcheck.h"
#include "nn/nn.h"

namespace nltest {

using namespace nl;

/// A float64 leaf with requires_grad, N(mean, std).
inline Variable leaf(const Shape& s, double mean = 0.0, double std = 1.0) {
  return Variable(Tensor::randn(s, mean, std, DType::Float64), true);
}
/// A float64 leaf with requires_grad, U(lo, hi).
inline Variable uleaf(const Shape& s, double lo, double hi) {
  return Variable(Tensor::rand(s, lo, hi, DType::Float64), true);
}
/// Overwrites a parameter's values in place (its Variable's data() is const).
inline void assign(const Variable& p, const Tensor& v) {
  Tensor t = p.data();
  t.copy_(v);
}
inline std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  auto x = vals(a), y = vals(b);
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}
inline double max_abs(const Tensor& a) {
  double m = 0;
  for (double v : vals(a)) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace nltest

/// Runs nl::gradcheck(f, inputs[, eps, atol, rtol]) and reports the worst errors and first mismatches
/// on failure (variadic so that lambdas with commas pass through the macro).
#define NL_GRADCHECK(...)                                                                              \
  do {                                                                                                 \
    auto _gc = nl::gradcheck(__VA_ARGS__);                                                             \
    INFO("max abs err " << _gc.max_abs_err << ", max rel err " << _gc.max_rel_err << "\n" << _gc.report); \
    CHECK(_gc.ok);                                                                                     \
  } while (0)
