// Differentiable ops on the GPU: forward and backward against the CPU (fused kernels: softmax,
// cross-entropy, LayerNorm family, attention, dropout; composite fallbacks: conv/pool helpers), and
// float64 gradchecks run on the GPU.
#include <cmath>
#include <functional>

#include "autograd/functions.h"
#include "autograd/gradcheck.h"
#include "backends/cuda_test_util.h"
#include "norm_variants.h"

using namespace nl;
using nltest::check_close;
using nltest::kGpu;

namespace {
using Fn = std::function<Variable(const std::vector<Variable>&)>;

// Runs f on copies of `inputs` on `dev` with loss sum(f * w); returns output and gradients.
std::vector<Tensor> fwd_bwd(Device dev, const std::vector<Tensor>& inputs, const Tensor& w, const Fn& f) {
  std::vector<Variable> vs;
  for (const Tensor& t : inputs) vs.emplace_back(t.to(dev).clone(), true);
  Variable y = f(vs);
  sum(y * Variable(w.to(dev))).backward();
  std::vector<Tensor> r{y.data()};
  for (auto& v : vs) r.push_back(v.grad());
  return r;
}
// Forward and backward on both devices with one seed (dropout masks included); GPU within bound.
void compare(const std::vector<Tensor>& inputs, const Shape& out, DType dt, const Fn& f) {
  Tensor w = Tensor::randn(out, 0, 1, dt);
  manual_seed(11);
  auto c = fwd_bwd(Device::cpu(), inputs, w, f);
  manual_seed(11);
  auto g = fwd_bwd(kGpu, inputs, w, f);
  for (size_t i = 0; i < c.size(); ++i) {
    INFO("result " << i << " (0 = output, then gradients)");
    check_close(g[i], c[i]);
  }
}
// gradcheck with float64 leaves on the GPU.
void gradcheck_gpu(const std::vector<Tensor>& inputs, const Fn& f) {
  std::vector<Variable> vs;
  for (const Tensor& t : inputs) vs.emplace_back(t.to(DType::Float64).to(kGpu), true);
  GradcheckResult r = gradcheck(f, vs);
  INFO(r.report);
  CHECK(r.ok);
}
AttentionOptions masks(int64_t B, int64_t Tq, int64_t Tk, DType dt, Device dev) {
  AttentionOptions o;
  std::vector<double> pad(B * Tk, 0.0);
  pad[Tk - 1] = 1;
  o.key_padding_mask = Tensor::from_vector(pad, {B, Tk}).to(DType::Int64).to(dev);
  std::vector<double> am = Tensor::randn({Tq, Tk}, 0, 1, DType::Float64).to_vector<double>();
  am[1] = -INFINITY;
  o.attn_mask = Tensor::from_vector(am, {Tq, Tk}).to(dt).to(dev);
  return o;
}
}  // namespace

TEST_CASE("softmax and cross-entropy forward and backward match the CPU", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = Tensor::randn({9, 301}, 0, 2, dt);
    compare({x}, {9, 301}, dt, [](const std::vector<Variable>& v) { return softmax(v[0]); });
    compare({x}, {9, 301}, dt, [](const std::vector<Variable>& v) { return log_softmax(v[0]); });
    Tensor t = Tensor::from_vector<int64_t>({0, 300, 2, -100, 7, 8, 9, 10, 299}, {9});
    compare({x}, {}, dt, [&](const std::vector<Variable>& v) {
      return cross_entropy(v[0], t.to(v[0].data().device()), 0.1, -100);
    });
  }
}

TEST_CASE("LayerNorm family forward and backward match the CPU", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64})
    for (int variant = 0; variant < nltest::kNormVariants; ++variant) {
      const LayerNormOptions o = nltest::norm_variant(variant);
      INFO("variant " << variant);
      compare({Tensor::randn({17, 512}, 1, 3, dt)}, {17, 512}, dt,
              [&](const std::vector<Variable>& v) { return layer_norm_fused(v[0], o); });
      // Gain and bias inside the kernel; their gradients summed over the 17 rows.
      compare({Tensor::randn({17, 512}, 1, 3, dt), Tensor::randn({512}, 1, 0.5, dt), Tensor::randn({512}, 0, 1, dt)},
              {17, 512}, dt, [&](const std::vector<Variable>& v) { return layer_norm_fused(v[0], o, v[1], v[2]); });
    }
}

TEST_CASE("attention with masks and causal and dropout matches the CPU", "[cuda]") {
  const int64_t B = 2, H = 4, Tq = 6, Tk = 7, dh = 8;
  for (DType dt : {DType::Float32, DType::Float64})
    for (bool causal : {false, true}) {
      Tensor q = Tensor::randn({B, H, Tq, dh}, 0, 1, dt), k = Tensor::randn({B, H, Tk, dh}, 0, 1, dt),
             v = Tensor::randn({B, H, Tk, dh}, 0, 1, dt);
      compare({q, k, v}, {B, H, Tq, dh}, dt, [&](const std::vector<Variable>& x) {
        AttentionOptions o = masks(B, Tq, Tk, dt, x[0].data().device());
        o.causal = causal;
        o.training = true;
        o.dropout = 0.2;
        return attention(x[0], x[1], x[2], o);
      });
    }
}

TEST_CASE("dropout masks are equal on both devices for one seed", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = Tensor::ones({4096}, dt);
    manual_seed(99);
    Tensor c = dropout(Variable(x), 0.3, true).data();
    manual_seed(99);
    Tensor g = dropout(Variable(x.to(kGpu)), 0.3, true).data();
    CHECK(g.to_vector<double>() == c.to_vector<double>());
  }
}

TEST_CASE("conv2d and max_pool2d (composite fallbacks) match the CPU", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor img = Tensor::randn({2, 3, 9, 8}, 0, 1, dt), w = Tensor::randn({5, 3, 3, 3}, 0, 1, dt),
           b = Tensor::randn({5}, 0, 1, dt);
    compare({img, w, b}, {2, 5, 5, 4}, dt,
            [](const std::vector<Variable>& v) { return conv2d(v[0], v[1], v[2], 2, 1); });
    compare({img}, {2, 3, 5, 5}, dt, [](const std::vector<Variable>& v) { return max_pool2d(v[0], 2, 2, 1); });
  }
}

TEST_CASE("float64 gradchecks on the GPU", "[cuda]") {
  Tensor x = Tensor::randn({3, 5}, 0, 1, DType::Float64), y = Tensor::randn({5, 4}, 0, 1, DType::Float64);
  gradcheck_gpu({x, y}, [](const std::vector<Variable>& v) { return tanh(matmul(v[0], v[1])); });
  gradcheck_gpu({x}, [](const std::vector<Variable>& v) { return log_softmax(v[0]) * sigmoid(v[0]); });
  gradcheck_gpu({x}, [](const std::vector<Variable>& v) { return layer_norm_fused(v[0], LayerNormOptions{}); });
  gradcheck_gpu({x}, [](const std::vector<Variable>& v) { return gelu(v[0]) / (abs(v[0]) + 1.0); });
  Tensor t = Tensor::from_vector<int64_t>({1, 4, -100}, {3});
  gradcheck_gpu({x}, [&](const std::vector<Variable>& v) { return cross_entropy(v[0], t.to(kGpu), 0.1, -100); });
  Tensor q = Tensor::randn({1, 2, 3, 4}, 0, 1, DType::Float64), k = Tensor::randn({1, 2, 5, 4}, 0, 1, DType::Float64),
         v = Tensor::randn({1, 2, 5, 4}, 0, 1, DType::Float64);
  // The masks are drawn once: a mask drawn inside f would change between gradcheck's evaluations.
  const AttentionOptions o = masks(1, 3, 5, DType::Float64, kGpu);
  gradcheck_gpu({q, k, v}, [&](const std::vector<Variable>& a) { return attention(a[0], a[1], a[2], o); });
  Tensor img = Tensor::randn({1, 2, 5, 5}, 0, 1, DType::Float64), w = Tensor::randn({3, 2, 3, 3}, 0, 1, DType::Float64);
  gradcheck_gpu({img, w}, [](const std::vector<Variable>& a) {
    return max_pool2d(conv2d(a[0], a[1], Variable(), 1, 1), 2, 2, 0);
  });
  Tensor table = Tensor::randn({6, 3}, 0, 1, DType::Float64);
  Tensor ids = Tensor::from_vector<int64_t>({0, 5, 5, 2}, {4});
  gradcheck_gpu({table}, [&](const std::vector<Variable>& a) { return embedding(a[0], ids.to(kGpu)); });
}
