// Tensor::randint (torch.randint: uniform integers in [low, high) from the global generator) and the
// printing pair shared with Module: str() is a one-line summary, repr() the full print.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "nn/nn.h"
#include "tensor/ops.h"

using namespace nl;
using Catch::Matchers::Contains;

TEST_CASE("randint: int64 from low up to high (excluded), uniform, reproducible from manual_seed", "[tensor][random]") {
  manual_seed(11);
  Tensor a = Tensor::randint(-3, 4, {7000});
  CHECK(a.dtype() == DType::Int64);
  CHECK(a.shape() == Shape{7000});
  const auto v = a.to_vector<int64_t>();
  std::map<int64_t, int> count;
  for (int64_t x : v) ++count[x];
  REQUIRE(count.size() == 7);  // every value of [-3, 4) occurs, and nothing else
  CHECK(count.begin()->first == -3);
  CHECK(count.rbegin()->first == 3);
  for (const auto& [x, c] : count) CHECK(std::abs(c - 1000) < 150);  // ~4.7 standard deviations
  manual_seed(11);
  CHECK(Tensor::randint(-3, 4, {7000}).to_vector<int64_t>() == v);
  // It advances the generator like rand() does: the next draw differs.
  CHECK(Tensor::randint(-3, 4, {7000}).to_vector<int64_t>() != v);
  CHECK(Tensor::randint(0, 2, {3}, DType::Float32).dtype() == DType::Float32);
  CHECK(Tensor::randint(5, 6, {4}).to_vector<int64_t>() == std::vector<int64_t>(4, 5));
  CHECK_THROWS_WITH(Tensor::randint(3, 3, {2}), Contains("must exceed low"));
  CHECK_THROWS_AS(Tensor::randint(0, int64_t(1) << 60, {2}), std::invalid_argument);
}

TEST_CASE("printing: Tensor and Module both offer str() (one line) and repr() (full)", "[tensor][print]") {
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(t.str() == "Tensor[2, 3] float32");
  CHECK(Tensor::zeros({}, DType::Int64).str() == "Tensor[] int64");
  CHECK(Tensor().str() == "Tensor(undefined)");
  CHECK(t.repr() == "Tensor(shape=[2, 3], dtype=float32, device=cpu) [1, 2, 3, 4, 5, 6]");
  CHECK(t.repr(2) == "Tensor(shape=[2, 3], dtype=float32, device=cpu) [1, 2, ...]");
  Linear fc(4, 3);
  CHECK(fc.str() == "Linear(in=4, out=3, bias=true)");
  CHECK(fc.repr() == "Linear(in=4, out=3, bias=true)");
  Sequential seq;
  seq.push_back(std::make_shared<Linear>(4, 3));
  seq.push_back(std::make_shared<ReLU>());
  CHECK(seq.str() == "Sequential(2 children)");
  CHECK_THAT(seq.repr(), Contains("(0): Linear(in=4, out=3, bias=true)") && Contains("(1): ReLU()"));
}
