// Shapes at the edge of int64: element counts and strides are overflow-checked, negative extents are
// refused, and every error names the shape (issue 7, item 1).
#include <catch2/catch.hpp>

#include "tensor/ops.h"

using namespace nl;
using Catch::Matchers::Contains;

TEST_CASE("shape limits: more than 2^63 elements is refused, naming the shape", "[tensor][limits]") {
  const Shape huge = {1048576, 1048576, 16777216};  // 2^20 * 2^20 * 2^24 = 2^64
  CHECK_THROWS_WITH(shape_numel(huge), Contains("shape [1048576, 1048576, 16777216] has more than 2^63 elements"));
  CHECK_THROWS_AS(contiguous_strides(huge), std::invalid_argument);
  CHECK_THROWS_WITH(Tensor::empty(huge), Contains("[1048576, 1048576, 16777216]"));
  CHECK_THROWS_AS(Tensor::zeros(huge, DType::Float64), std::invalid_argument);
  // 2^62 elements fit an int64 count but not a byte count of float32 (2^64 bytes).
  CHECK_THROWS_WITH(Tensor::empty({int64_t(1) << 31, int64_t(1) << 31}),
                    Contains("needs more than 2^63 bytes"));
  // A zero extent makes the count 0, but the other dims' strides would still overflow.
  CHECK_THROWS_AS(contiguous_strides({0, int64_t(1) << 40, int64_t(1) << 40}), std::invalid_argument);
  // A view may not overflow either.
  CHECK_THROWS_WITH(Tensor::zeros({1, 1}).expand({int64_t(1) << 40, int64_t(1) << 40}),
                    Contains("more than 2^63 elements"));
}

TEST_CASE("shape limits: negative extents are refused with the dim named", "[tensor][limits]") {
  CHECK_THROWS_WITH(Tensor::empty({2, -3}), Contains("shape [2, -3] has a negative extent (-3 at dim 1)"));
  CHECK_THROWS_AS(shape_numel({-1}), std::invalid_argument);
  CHECK_THROWS_AS(Tensor::zeros({2, 3}).reshape({-2, 3}), std::invalid_argument);
  CHECK_THROWS_WITH(Tensor::arange(-1), Contains("n must be >= 0"));
}

TEST_CASE("shape limits: ordinary and empty shapes still work", "[tensor][limits]") {
  CHECK(shape_numel({}) == 1);
  CHECK(shape_numel({0, int64_t(1) << 40}) == 0);
  CHECK(contiguous_strides({2, 0, 3}) == Strides{0, 3, 1});
  CHECK(Tensor::empty({4, 0}).numel() == 0);
  CHECK(shape_numel({int64_t(1) << 31, int64_t(1) << 31}) == int64_t(1) << 62);
}

TEST_CASE("dtype: dtype_size, dtype_name and is_floating cover the enum and reject other values", "[tensor]") {
  CHECK(dtype_size(DType::Float32) == 4);
  CHECK(dtype_size(DType::Float64) == 8);
  CHECK(dtype_size(DType::Int64) == 8);
  CHECK(dtype_name(DType::Float32) == "float32");
  CHECK(dtype_name(DType::Float64) == "float64");
  CHECK(dtype_name(DType::Int64) == "int64");
  CHECK(is_floating(DType::Float64));
  CHECK_FALSE(is_floating(DType::Int64));
  const auto bad = static_cast<DType>(7);  // e.g. a corrupt checkpoint header
  CHECK_THROWS_WITH(dtype_name(bad), Contains("invalid DType value 7"));
  CHECK_THROWS_AS(dtype_size(bad), std::invalid_argument);
}
