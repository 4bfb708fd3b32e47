// An optimizer over no parameters is refused as in torch.optim ("optimizer got an empty parameter
// list"): a model whose parameters() was taken too early would otherwise silently never train.
#include <catch2/catch.hpp>

#include "optim/optimizer.h"

using namespace nl;
using Catch::Matchers::Contains;

TEST_CASE("optimizers: an empty parameter list throws std::invalid_argument", "[optim]") {
  CHECK_THROWS_WITH(Adam(std::vector<Variable>{}), Contains("optimizer got an empty parameter list"));
  CHECK_THROWS_AS(AdamW(std::vector<Variable>{}), std::invalid_argument);
  CHECK_THROWS_AS(SGD(std::vector<Variable>{}), std::invalid_argument);
  CHECK_THROWS_AS(Adam(std::vector<ParamGroup>{}), std::invalid_argument);
  CHECK_THROWS_AS(SGD(std::vector<ParamGroup>{ParamGroup{}, ParamGroup{}}), std::invalid_argument);
  // One parameter is enough.
  Variable w(Tensor::zeros({2}), true, "w");
  CHECK_NOTHROW(Adam(std::vector<Variable>{w}));
}
