// Post-backward callbacks (autograd/post_backward.h): they run once, in order, after every node of the
// pass has run; none runs when the pass throws; queueing outside a backward pass is refused.
#include <catch2/catch.hpp>

#include "autograd/functions.h"
#include "autograd/post_backward.h"

using namespace nl;
using Catch::Matchers::Contains;

namespace {
// y = x with a backward that appends `tag` to `log` and queues a callback appending tag + "*".
Variable logging_identity(const Variable& x, std::vector<std::string>& log, const std::string& tag) {
  return make_result(x.data().clone(), "LoggingIdentity", {x},
                     [&log, tag](const Tensor& g, const std::vector<bool>&) {
                       log.push_back(tag);
                       CHECK(in_backward_pass());
                       queue_post_backward([&log, tag] { log.push_back(tag + "*"); });
                       return std::vector<Tensor>{g};
                     });
}
}  // namespace

TEST_CASE("post-backward callbacks run after every node, in queueing order", "[autograd][post_backward]") {
  std::vector<std::string> log;
  Variable x(Tensor::from_vector<double>({1, 2}, {2}), true);
  Variable y = logging_identity(logging_identity(x, log, "inner"), log, "outer");
  CHECK_FALSE(in_backward_pass());
  sum(y).backward();
  CHECK(log == std::vector<std::string>{"outer", "inner", "outer*", "inner*"});
  CHECK(x.grad().to_vector<double>() == std::vector<double>{1, 1});
  CHECK_FALSE(in_backward_pass());
}

TEST_CASE("post-backward callbacks of a pass that throws are dropped", "[autograd][post_backward]") {
  std::vector<std::string> log;
  Variable x(Tensor::from_vector<double>({1, 2}, {2}), true);
  Variable bad = make_result(x.data().clone(), "Throws", {x}, [](const Tensor&, const std::vector<bool>&) -> std::vector<Tensor> {
    throw std::runtime_error("boom");
  });
  Variable y = logging_identity(bad, log, "a");
  CHECK_THROWS_WITH(sum(y).backward(), Contains("boom"));
  CHECK(log == std::vector<std::string>{"a"});  // its callback never ran
  CHECK_FALSE(in_backward_pass());
  sum(logging_identity(x, log, "b")).backward();  // the next pass has a fresh queue
  CHECK(log == std::vector<std::string>{"a", "b", "b*"});
}

TEST_CASE("queue_post_backward outside a backward pass is refused", "[autograd][post_backward]") {
  CHECK_THROWS_WITH(queue_post_backward([] {}), Contains("outside a backward pass"));
}
