// layer_norm_channels (LN-G-Position over NCHW images, Ni et al. 2024): the same function and gradients as
// the LayerNorm rows kernel on the permuted image (every variant of Xu et al. 2019's family, with and
// without the per-channel affine, tiles of pixels with a tail), float64 gradchecks, bits independent of the
// thread count, and clear errors on bad input.
#include "backends/runtime.h"
#include "nn_test_util.h"
#include "norm_variants.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
// The reference: one row per (image, pixel, group) through layer_norm_fused, then the per-channel affine.
Variable by_rows(const Variable& x, int64_t groups, const LayerNormOptions& o, const Variable& w, const Variable& b) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  Variable rows = reshape(permute(x, {0, 2, 3, 1}), {N * H * W * groups, C / groups});
  Variable y = permute(reshape(layer_norm_fused(rows, o), {N, H, W, C}), {0, 3, 1, 2});
  if (w.defined()) y = mul(y, reshape(w, {1, C, 1, 1}));
  if (b.defined()) y = add(y, reshape(b, {1, C, 1, 1}));
  return y;
}

struct Run {
  Tensor y;
  std::vector<Tensor> grads;
};
// y = f(x, w, b), loss = Σ y ⊙ gy (+ Σ x ⊙ gy when `residual`: x's gradient then arrives in two parts).
template <typename F>
Run run(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& gy, bool residual, F&& f) {
  Variable xv(x.clone(), true), wv = w.defined() ? Variable(w.clone(), true) : Variable(),
                                bv = b.defined() ? Variable(b.clone(), true) : Variable();
  Variable y = f(xv, wv, bv);
  Variable loss = sum(mul(y, Variable(gy)));
  if (residual) loss = add(loss, sum(mul(xv, Variable(gy))));
  loss.backward();
  Run r{y.data(), {xv.grad()}};
  if (wv.defined()) r.grads.push_back(wv.grad());
  if (bv.defined()) r.grads.push_back(bv.grad());
  return r;
}
double rel(const Tensor& a, const Tensor& b) { return max_abs_diff(a, b) / std::max(1.0, max_abs(b)); }
}  // namespace

TEST_CASE("layer_norm_channels: equals the rows kernel on the permuted image, every variant and affine",
          "[nn][norm][lng][kernel]") {
  for (DType dt : {DType::Float64, DType::Float32})
    for (int v = 0; v < kNormVariants; ++v)
      for (const auto& [shape, groups] : std::vector<std::pair<Shape, int64_t>>{
               {{3, 12, 5, 13}, 3}, {{3, 12, 5, 13}, 1}, {{2, 8, 3, 3}, 4}, {{1, 6, 1, 1}, 2}})
        for (int affine = 0; affine < 3; ++affine)  // none, gain, gain and bias
          for (bool residual : {false, true}) {
            const LayerNormOptions o = norm_variant(v);
            INFO(dtype_name(dt) << " variant " << v << " " << shape_str(shape) << " G=" << groups << " affine "
                                << affine << (residual ? " residual" : ""));
            manual_seed(11 + v);
            const int64_t C = shape[1];
            const Tensor x = Tensor::randn(shape, 0.5, 2.0, dt), gy = Tensor::randn(shape, 0.0, 1.0, dt);
            const Tensor w = affine ? Tensor::randn({C}, 1.0, 0.5, dt) : Tensor();
            const Tensor b = affine == 2 ? Tensor::randn({C}, 0.0, 1.0, dt) : Tensor();
            Run got = run(x, w, b, gy, residual, [&](const Variable& xv, const Variable& wv, const Variable& bv) {
              return layer_norm_channels_fused(xv, groups, o, wv, bv);
            });
            Run want = run(x, w, b, gy, residual, [&](const Variable& xv, const Variable& wv, const Variable& bv) {
              return by_rows(xv, groups, o, wv, bv);
            });
            const double tol = dt == DType::Float64 ? 1e-12 : 2e-5;
            CHECK(rel(got.y, want.y) <= tol);
            REQUIRE(got.grads.size() == want.grads.size());
            for (size_t i = 0; i < got.grads.size(); ++i) {
              INFO("gradient " << i);
              CHECK(rel(got.grads[i], want.grads[i]) <= tol);
            }
          }
}

TEST_CASE("layer_norm_channels: the saved statistics are the rows kernel's, per (image, group, pixel)",
          "[nn][norm][lng][kernel]") {
  manual_seed(5);
  const Tensor x = Tensor::randn({2, 6, 7, 11}, 1.0, 3.0, DType::Float64);
  LayerNormResult got = layer_norm_channels(x, Tensor(), Tensor(), 3, LayerNormOptions{});
  LayerNormResult want = layer_norm(x.permute({0, 2, 3, 1}).contiguous().reshape({154, 3, 2}), Tensor(), Tensor(),
                                    LayerNormOptions{});
  CHECK(got.mean.shape() == Shape{2, 3, 7, 11});
  CHECK(max_abs_diff(got.mean, want.mean.reshape({2, 7, 11, 3}).permute({0, 3, 1, 2}).contiguous()) < 1e-14);
  CHECK(max_abs_diff(got.rstd, want.rstd.reshape({2, 7, 11, 3}).permute({0, 3, 1, 2}).contiguous()) < 1e-12);
}

TEST_CASE("layer_norm_channels: float64 gradcheck of the variants that are true gradients",
          "[nn][norm][lng][kernel][grad]") {
  // detach-mean (2) and detach-std (3) are by design not the gradient of the forward (Xu et al. 2019,
  // Theorem 1's W2, W3); the test above holds them equal to the rows kernel's.
  for (int v : {0, 1, 4})
    for (int64_t groups : {1, 2}) {
      INFO("variant " << v << " G=" << groups);
      manual_seed(20 + v);
      const LayerNormOptions o = norm_variant(v);
      NL_GRADCHECK([&](const std::vector<Variable>& in) { return layer_norm_channels_fused(in[0], groups, o, in[1], in[2]); },
                   {leaf({2, 4, 3, 3}, 0.5, 1.5), leaf({4}, 1.0, 0.5), leaf({4})});
    }
}

TEST_CASE("layer_norm_channels: the same bits on one and two threads", "[nn][norm][lng][kernel]") {
  manual_seed(9);
  const Tensor x = Tensor::randn({8, 16, 32, 32}, 0.5, 2.0, DType::Float32),
               gy = Tensor::randn({8, 16, 32, 32}, 0.0, 1.0, DType::Float32),
               w = Tensor::randn({16}, 1.0, 0.5, DType::Float32), b = Tensor::randn({16}, 0.0, 1.0, DType::Float32);
  const int before = get_num_threads();
  std::vector<Run> runs;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    runs.push_back(run(x, w, b, gy, false, [](const Variable& xv, const Variable& wv, const Variable& bv) {
      return layer_norm_channels_fused(xv, 4, LayerNormOptions{}, wv, bv);
    }));
  }
  set_num_threads(before);
  CHECK(max_abs_diff(runs[0].y, runs[1].y) == 0);
  for (size_t i = 0; i < 3; ++i) CHECK(max_abs_diff(runs[0].grads[i], runs[1].grads[i]) == 0);
}

TEST_CASE("layer_norm_channels: bad input is a clear error", "[nn][norm][lng][kernel]") {
  const Tensor img = Tensor::randn({2, 6, 3, 3}, 0.0, 1.0, DType::Float32);
  CHECK_THROWS_WITH(layer_norm_channels(Tensor::randn({2, 6}, 0.0, 1.0, DType::Float32), Tensor(), Tensor(), 2, {}),
                    Contains("must be images [N, C, H, W]"));
  CHECK_THROWS_WITH(layer_norm_channels(img, Tensor(), Tensor(), 4, {}),
                    Contains("groups = 4 must divide the 6 channels"));
  LayerNormOptions unbiased;
  unbiased.unbiased = true;
  CHECK_THROWS_WITH(layer_norm_channels(img, Tensor(), Tensor(), 6, unbiased), Contains("at least 2 (unbiased)"));
  CHECK_THROWS_WITH(layer_norm_channels(img, Tensor::ones({3}, DType::Float32), Tensor(), 2, {}),
                    Contains("weight and bias must be [6]"));
  CHECK_THROWS(layer_norm_channels(Tensor::zeros({2, 6, 3, 3}, DType::Int64), Tensor(), Tensor(), 2, {}));
}
