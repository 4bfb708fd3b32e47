// Ops refuse wrong dtypes in their front end, before any parallel kernel runs: an exception thrown
// inside an OpenMP region calls std::terminate, so these tests would abort the whole process if a
// check sat inside a kernel loop (issue 7, item 2). Sizes cover the serial and the parallel path.
#include <catch2/catch.hpp>

#include "backends/cpu/threads.h"
#include "tensor/ops.h"

using namespace nl;
using Catch::Matchers::Contains;

TEST_CASE("op dtypes: float-only math ops throw std::invalid_argument on int64 and the process survives",
          "[tensor][dtype][threads2]") {
  for (int64_t n : {int64_t(5), 4 * kParallelGrain}) {
    const Tensor i = Tensor::arange(n, DType::Int64);
    CHECK_THROWS_WITH(exp(i), Contains("exp: expects a float tensor, got int64; convert with .to(DType::Float32)"));
    CHECK_THROWS_AS(log(i), std::invalid_argument);
    CHECK_THROWS_AS(sqrt(i), std::invalid_argument);
    CHECK_THROWS_AS(rsqrt(i), std::invalid_argument);
    CHECK_THROWS_AS(tanh(i), std::invalid_argument);
    CHECK_THROWS_AS(sigmoid(i), std::invalid_argument);
    CHECK_THROWS_AS(gelu(i), std::invalid_argument);
    CHECK_THROWS_AS(gelu_grad(i), std::invalid_argument);
    CHECK_THROWS_AS(reciprocal(i), std::invalid_argument);
    CHECK_THROWS_WITH(pow(i, 2.0), Contains("pow: expects a float tensor"));
    CHECK_THROWS_WITH(softmax(i.view({1, -1})), Contains("softmax: expects a float tensor, got int64"));
    CHECK_THROWS_AS(log_softmax(i.view({1, -1})), std::invalid_argument);
    CHECK_THROWS_WITH(matmul(i.view({1, -1}), i.view({-1, 1})), Contains("matmul: expects a float tensor"));
    // The same kernels called directly are refused before their loops too.
    Tensor out = Tensor::empty(i.shape(), DType::Int64);
    CHECK_THROWS_AS(backend_for(DeviceType::CPU).unary(UnaryOp::Exp, out.desc(), i.desc(), 0, 0),
                    std::invalid_argument);
    // Ops defined on integers keep working, on both paths.
    CHECK(neg(i).to_vector<int64_t>()[n - 1] == -(n - 1));
    CHECK(abs(neg(i)).to_vector<int64_t>()[n - 1] == n - 1);
    CHECK(clamp_max(i, 3.0).to_vector<int64_t>()[n - 1] == 3);
  }
}

TEST_CASE("op dtypes: int64 division by zero throws instead of trapping", "[tensor][dtype]") {
  const Tensor a = Tensor::from_vector<int64_t>({6, 7, 8}, {3});
  CHECK(div(a, Tensor::from_vector<int64_t>({2, 7, 4}, {3})).to_vector<int64_t>() == std::vector<int64_t>{3, 1, 2});
  CHECK_THROWS_WITH(div(a, Tensor::from_vector<int64_t>({2, 0, 4}, {3})), Contains("int64 division by zero"));
  // Float division by zero is IEEE (inf), not an error.
  CHECK(std::isinf(div(Tensor::ones({1}), Tensor::zeros({1})).item()));
}
