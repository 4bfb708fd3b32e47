// Edge cases of softmax and GEMM (issue 7, item 4): softmax over zero columns gives an empty result as
// in PyTorch; a GEMM extent beyond int (cblas's argument type) is refused before BLAS is called; the
// CPU backend always reports itself available.
#include <catch2/catch.hpp>

#include <climits>

#include "autograd/functions.h"
#include "tensor/ops.h"

using namespace nl;
using Catch::Matchers::Contains;

TEST_CASE("softmax and log_softmax over zero columns return an empty tensor of the same shape", "[tensor][empty]") {
  for (const Shape& s : {Shape{3, 0}, Shape{0, 4}, Shape{2, 0, 5}}) {
    Tensor x = Tensor::zeros(s);
    CHECK(softmax(x).shape() == s);
    CHECK(log_softmax(x).shape() == s);
    CHECK(softmax(x, 0).shape() == s);
  }
  // Through autograd, forward and backward.
  Variable v(Tensor::zeros({3, 0}, DType::Float64), true);
  Variable y = log_softmax(v);
  CHECK(y.shape() == Shape{3, 0});
  sum(y).backward();
  CHECK(v.grad().shape() == Shape{3, 0});
  // The kernel itself with zero columns writes nothing and does not divide by zero.
  Tensor in = Tensor::zeros({3, 0}), out = Tensor::zeros({3, 0});
  backend_for(DeviceType::CPU).fused().softmax(out.desc(), in.desc(), false);
  backend_for(DeviceType::CPU).fused().softmax_backward(out.desc(), in.desc(), in.desc(), true);
}

TEST_CASE("matmul refuses extents beyond 2^31 - 1 before copying or calling BLAS", "[tensor][limits]") {
  const int64_t big = int64_t(INT_MAX) + 1;
  // Broadcast views: no memory is touched, so only the check can stop the product.
  Tensor a = Tensor::zeros({1, 1}).expand({2, big}), b = Tensor::zeros({1, 1}).expand({big, 3});
  CHECK_THROWS_WITH(matmul(a, b), Contains("K = 2147483648") && Contains("exceeds 2^31 - 1"));
  Tensor rows = Tensor::zeros({1, 1, 1}).expand({big, 1, 4});
  CHECK_THROWS_WITH(matmul(rows, Tensor::zeros({4, 2})), Contains("M = 2147483648"));
  // The backend kernel checks too (callers such as linear's backward pass it extents directly).
  float x = 0;
  CHECK_THROWS_WITH(backend_for(DeviceType::CPU).gemm(DType::Float32, false, false, big, 1, 1, 1.0, &x, 1, 0, &x, 1, 0,
                                                      0.0, &x, 1, 0, 1, 0),
                    Contains("M = 2147483648"));
  CHECK_THROWS_WITH(backend_for(DeviceType::CPU).gemm(DType::Int64, false, false, 1, 1, 1, 1.0, &x, 1, 0, &x, 1, 0,
                                                      0.0, &x, 1, 0, 1, 0),
                    Contains("expects float tensors, got int64"));
}

TEST_CASE("backend_available: the CPU backend is always available", "[tensor][backend]") {
  CHECK(backend_available(DeviceType::CPU));
  CHECK(backend_for(DeviceType::CPU).type() == DeviceType::CPU);
}
