// What the autograd graph keeps alive: only the tensors that backward needs (saved tensors, and the
// leaves whose gradients it accumulates), never an op's output that no backward reads.
#include <catch2/catch.hpp>

#include <memory>

#include "autograd/functions.h"
#include "autograd/memory.h"

using namespace nl;

namespace {
std::weak_ptr<Storage> storage_of(const Variable& v) { return v.data().storage(); }
size_t bytes_of(const Variable& v) { return v.data().storage()->nbytes(); }
}  // namespace

TEST_CASE("graph memory: dropping intermediates of relu(linear(x)) frees what backward does not need",
          "[autograd][memory]") {
  manual_seed(7);
  Variable x(Tensor::randn({8, 16}));  // input batch: no gradient
  Variable w1(Tensor::randn({16, 16}), true), b1(Tensor::randn({16}), true);
  Variable w2(Tensor::randn({16, 16}), true), b2(Tensor::randn({16}), true);
  Variable h1 = linear(x, w1, b1);  // ReLU saves its output, not its input: h1 is not needed
  Variable r1 = relu(h1);            // needed: ReLU's saved output and Linear 2's saved input
  Variable h2 = linear(r1, w2, b2);  // not needed
  Variable r2 = relu(h2);            // needed by ReLU 2
  Variable y = sum(r2);
  auto h1_storage = storage_of(h1), r1_storage = storage_of(r1), h2_storage = storage_of(h2);
  const size_t act = bytes_of(h1);  // every activation has the same size
  h1 = Variable();
  r1 = Variable();
  h2 = Variable();
  CHECK(h1_storage.expired());
  CHECK(h2_storage.expired());
  CHECK_FALSE(r1_storage.expired());
  // Held: x, r1, r2 (saved) and the four parameters (saved weights; leaves behind the sinks).
  const size_t params = bytes_of(w1) + bytes_of(b1) + bytes_of(w2) + bytes_of(b2);
  CHECK(graph_held_bytes(y) == bytes_of(x) + 2 * act + params);
  r2 = Variable();
  y.backward();
  CHECK(b2.grad().defined());
  CHECK(w1.grad().defined());
  // backward freed the saved tensors; the sinks still reference the parameters.
  CHECK(graph_held_bytes(y) == params);
  CHECK(r1_storage.expired());
}

TEST_CASE("graph memory: an input no backward needs is not kept by the graph", "[autograd][memory]") {
  Variable w(Tensor::ones({4, 4}), true);
  Variable x(Tensor::ones({4, 4}));
  Variable y = sum(add(x, w));  // Add saves nothing
  auto x_storage = storage_of(x);
  x = Variable();
  CHECK(x_storage.expired());
  CHECK(graph_held_bytes(y) == bytes_of(w));
  y.backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>(16, 1.0f));
}

TEST_CASE("graph memory: the graph keeps a leaf alive until backward", "[autograd][memory]") {
  Variable y;
  {
    Variable w(Tensor::from_vector<double>({1, 2, 3}, {3}), true, "w");
    y = sum(mul(w, w));
  }
  y.backward();  // the leaf went out of scope in user code; its sink still accumulates safely
  CHECK(y.item() == 14.0);
}

TEST_CASE("graph memory: graph_held_bytes of leaves and undefined variables is 0", "[autograd][memory]") {
  CHECK(graph_held_bytes(Variable()) == 0);
  CHECK(graph_held_bytes(Variable(Tensor::ones({3}), true)) == 0);
}
