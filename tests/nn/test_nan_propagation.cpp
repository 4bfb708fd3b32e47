// A NaN propagates through every activation and pooling as in PyTorch (issue: relu(NaN) returned 0, which
// hid a NaN bias in a checkpoint behind a flat loss): relu, maximum/minimum, the ReLU backward (a NaN
// output passes the gradient, as threshold_backward), max-pool (the branch-free 2x2 paths for float32 and
// float64, and the general path), the FFN's fused bias + ReLU (+ dropout, where a dropped NaN stays NaN as
// PyTorch's x * mask) forward and backward, dropout itself, and the
// MNIST CNN end to end.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "autograd/functions.h"
#include "nn/models/mnist_cnn.h"

using namespace nl;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> values(const Variable& v) { return v.data().to_vector<double>(); }
}  // namespace

TEST_CASE("nan: relu, maximum and minimum keep a NaN", "[nn][nan]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = Tensor::from_vector<double>({-1.0, kNaN, 2.0, -0.0}, {4}).to(dt);
    const auto r = values(relu(Variable(x)));
    CHECK(r[0] == 0);
    CHECK(std::isnan(r[1]));
    CHECK(r[2] == 2);
    Tensor y = Tensor::from_vector<double>({kNaN, 1.0, kNaN, 0.0}, {4}).to(dt);
    const auto mx = maximum(x, y).to_vector<double>(), mn = minimum(x, y).to_vector<double>();
    CHECK(std::isnan(mx[0]));  // NaN on the right
    CHECK(std::isnan(mx[1]));  // NaN on the left
    CHECK(std::isnan(mn[0]));
    CHECK(std::isnan(mn[1]));
    CHECK(mx[3] == 0);
  }
}

TEST_CASE("nan: the ReLU backward passes the gradient where the output is NaN", "[nn][nan]") {
  Variable x(Tensor::from_vector<double>({-1.0, kNaN, 2.0}, {3}), true);
  Variable y = relu(x);
  sum(y * Variable(Tensor::from_vector<double>({5.0, 7.0, 11.0}, {3}))).backward();
  const auto g = x.grad().to_vector<double>();
  CHECK(g[0] == 0);
  CHECK(g[1] == 7);  // PyTorch: threshold_backward gives grad where !(x <= 0)
  CHECK(g[2] == 11);
}

TEST_CASE("nan: max-pool makes a window with a NaN NaN on every path", "[nn][nan]") {
  for (DType dt : {DType::Float32, DType::Float64})
    for (int64_t k : {2, 3}) {
      // [1, 2, 6, 6]: channel 0 has a NaN in the first window only, at different places of the window.
      std::vector<double> v(72);
      for (size_t i = 0; i < v.size(); ++i) v[i] = (double)((i * 37) % 11) - 5;
      v[0] = kNaN;            // top-left of the first window (channel 0)
      v[36 + 6 + 1] = kNaN;  // bottom-right of the first window (channel 1)
      Tensor x = Tensor::from_vector(v, {1, 2, 6, 6}).to(dt);
      const auto out = values(max_pool2d(Variable(x), k));
      const int64_t per = (6 / k) * (6 / k);
      CHECK(std::isnan(out[0]));
      CHECK(std::isnan(out[per]));
      for (int64_t i = 1; i < per; ++i) CHECK_FALSE(std::isnan(out[i]));
    }
  // The AVX-512 2x2 path also runs over wide planes (16 outputs per step): a NaN in the last lane.
  std::vector<float> w(2 * 64, 1.0f);
  w[62] = std::numeric_limits<float>::quiet_NaN();  // row 0, column 62: output column 31
  const auto o = values(max_pool2d(Variable(Tensor::from_vector(w, {1, 1, 2, 64})), 2));
  CHECK(std::isnan(o[31]));
  CHECK(o[30] == 1);
}

TEST_CASE("nan: the FFN's fused bias + ReLU keeps a NaN forward and passes its gradient", "[nn][nan]") {
  manual_seed(3);
  for (double p : {0.0, 0.1}) {
    Variable x(Tensor::randn({4, 8}, 0, 1, DType::Float64), true);
    Variable w1(Tensor::randn({16, 8}, 0, 1, DType::Float64), true), b1(Tensor::zeros({16}, DType::Float64), true);
    Variable w2(Tensor::randn({8, 16}, 0, 1, DType::Float64), true), b2(Tensor::zeros({8}, DType::Float64), true);
    (void)b1;
    std::vector<double> bv(16, 0.0);
    bv[5] = kNaN;
    b1 = Variable(Tensor::from_vector(bv, {16}), true);
    Variable y = ffn_relu(x, w1, b1, w2, b2, p, /*training=*/p > 0);
    for (double v : values(y)) CHECK(std::isnan(v));  // fc2 mixes the NaN unit into every output (a dropped NaN stays NaN, as x * mask)
    sum(y).backward();
    // As PyTorch: the ReLU backward passes the (finite) gradient at the NaN unit; fc2's weight gradient
    // (hidden^T · g) carries the NaN.
    CHECK(std::isfinite(b1.grad().to_vector<double>()[5]));
    bool nan_w2 = false;
    for (double v : w2.grad().to_vector<double>()) nan_w2 = nan_w2 || std::isnan(v);
    CHECK(nan_w2);
  }
}

TEST_CASE("nan: dropout and dropout_add keep a NaN even where it is dropped", "[nn][nan]") {
  manual_seed(7);
  std::vector<double> v(256, 1.0);
  for (size_t i = 0; i < v.size(); i += 2) v[i] = kNaN;
  Variable x(Tensor::from_vector(v, {256}));
  const auto d = values(dropout(x, 0.5, true)), da = values(dropout_add(Variable(Tensor::zeros({256}, DType::Float64)), x, 0.5, true));
  for (size_t i = 0; i < v.size(); i += 2) {
    CHECK(std::isnan(d[i]));
    CHECK(std::isnan(da[i]));
  }
}

TEST_CASE("nan: a NaN conv bias reaches the MNIST CNN's logits", "[nn][nan]") {
  MnistCnn m(MnistCnnConfig{});
  for (auto& [name, p] : m.named_parameters())
    if (name == "conv1.bias") {
      std::vector<float> b = p.data().to_vector<float>();
      b[0] = std::numeric_limits<float>::quiet_NaN();
      p.set_data(Tensor::from_vector(b, {(int64_t)b.size()}));
    }
  const auto logits = values(m(Variable(Tensor::rand({2, 1, 28, 28}))));
  for (double v : logits) CHECK(std::isnan(v));
}
