// BatchNorm's training step over the channels of NCHW images in one kernel (batch_norm_channels_fused):
// the same outputs, gradients and running statistics as the rows path on the permuted image, a float64
// gradcheck, bits independent of the thread count, and clear errors on bad input.
#include "backends/runtime.h"
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
struct Step {
  Tensor y;
  std::vector<Tensor> grads;     // x, weight, bias
  Tensor running_mean, running_var;
};
// One training forward of a fresh batchnorm(C) (weight and bias set) on x, loss = Σ y ⊙ gy (+ Σ x ⊙ gy
// when `residual`, so x's gradient arrives in two parts); `rows`: the input as one row per pixel instead.
Step train_step(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& gy, bool residual, bool rows) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  auto bn = make_norm("batchnorm", C, {{"dtype", dtype_name(x.dtype())}});
  assign(bn->param("weight"), w);
  assign(bn->param("bias"), b);
  bn->train();
  Variable xv(x.clone(), true);
  Variable y = rows ? permute(reshape((*bn)(reshape(permute(xv, {0, 2, 3, 1}), {N * H * W, C})), {N, H, W, C}),
                              {0, 3, 1, 2})
                    : (*bn)(xv);
  Variable loss = sum(mul(y, Variable(gy)));
  if (residual) loss = add(loss, sum(mul(xv, Variable(gy))));
  loss.backward();
  return {y.data(), {xv.grad(), bn->param("weight").grad(), bn->param("bias").grad()}, bn->buffer("running_mean"),
          bn->buffer("running_var")};
}
double rel(const Tensor& a, const Tensor& b) { return max_abs_diff(a, b) / std::max(1.0, max_abs(b)); }
}  // namespace

TEST_CASE("batchnorm on images: the NCHW kernel equals the rows path, outputs, gradients and running statistics",
          "[nn][norm][batchnorm][kernel]") {
  for (DType dt : {DType::Float64, DType::Float32})
    for (const Shape& s : {Shape{4, 6, 5, 13}, Shape{2, 3, 1, 1}, Shape{1, 5, 2, 3}})
      for (bool residual : {false, true}) {
        INFO(dtype_name(dt) << " " << shape_str(s) << (residual ? " residual" : ""));
        manual_seed(31);
        const Tensor x = Tensor::randn(s, 0.5, 2.0, dt), gy = Tensor::randn(s, 0.0, 1.0, dt);
        const Tensor w = Tensor::randn({s[1]}, 1.0, 0.5, dt), b = Tensor::randn({s[1]}, 0.0, 1.0, dt);
        Step got = train_step(x, w, b, gy, residual, false), want = train_step(x, w, b, gy, residual, true);
        const double tol = dt == DType::Float64 ? 1e-12 : 2e-5;
        CHECK(rel(got.y, want.y) <= tol);
        for (size_t i = 0; i < 3; ++i) {
          INFO("gradient " << i);
          CHECK(rel(got.grads[i], want.grads[i]) <= tol);
        }
        CHECK(rel(got.running_mean, want.running_mean) <= tol);
        CHECK(rel(got.running_var, want.running_var) <= tol);
      }
}

TEST_CASE("batch_norm_channels: float64 gradcheck through the batch statistics", "[nn][norm][batchnorm][kernel][grad]") {
  manual_seed(33);
  NL_GRADCHECK([](const std::vector<Variable>& in) { return batch_norm_channels_fused(in[0], 1e-5, in[1], in[2]).y; },
               {leaf({3, 4, 2, 3}, 0.5, 1.5), leaf({4}, 1.0, 0.5), leaf({4})});
  NL_GRADCHECK([](const std::vector<Variable>& in) { return batch_norm_channels_fused(in[0], 1e-3).y; },
               {leaf({2, 3, 1, 2}, 0.5, 1.5)});
}

TEST_CASE("batch_norm_channels: the same bits on one and two threads", "[nn][norm][batchnorm][kernel]") {
  manual_seed(35);
  const Shape s{16, 32, 16, 16};
  const Tensor x = Tensor::randn(s, 0.5, 2.0, DType::Float32), gy = Tensor::randn(s, 0.0, 1.0, DType::Float32),
               w = Tensor::randn({32}, 1.0, 0.5, DType::Float32), b = Tensor::randn({32}, 0.0, 1.0, DType::Float32);
  const int before = get_num_threads();
  std::vector<Step> runs;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    runs.push_back(train_step(x, w, b, gy, false, false));
  }
  set_num_threads(before);
  CHECK(max_abs_diff(runs[0].y, runs[1].y) == 0);
  for (size_t i = 0; i < 3; ++i) CHECK(max_abs_diff(runs[0].grads[i], runs[1].grads[i]) == 0);
  CHECK(max_abs_diff(runs[0].running_var, runs[1].running_var) == 0);
}

TEST_CASE("batch_norm_channels: bad input is a clear error", "[nn][norm][batchnorm][kernel]") {
  CHECK_THROWS_WITH(batch_norm_channels(Tensor::randn({4, 6}, 0.0, 1.0, DType::Float32), Tensor(), Tensor(), 1e-5),
                    Contains("must be images [N, C, H, W]"));
  CHECK_THROWS_WITH(batch_norm_channels(Tensor::randn({1, 6, 1, 1}, 0.0, 1.0, DType::Float32), Tensor(), Tensor(), 1e-5),
                    Contains("fewer than 2 values per channel"));
  CHECK_THROWS_WITH(batch_norm_channels(Tensor::randn({2, 6, 2, 2}, 0.0, 1.0, DType::Float32),
                                        Tensor::ones({4}, DType::Float32), Tensor(), 1e-5),
                    Contains("weight and bias must be [6]"));
  auto bn = make_norm("batchnorm", 6);
  bn->train();
  CHECK_THROWS_WITH((*bn)(Variable(Tensor::randn({1, 6, 1, 1}, 0.0, 1.0, DType::Float32))),
                    Contains("more than one value per channel") && Contains("eval()"));
}
