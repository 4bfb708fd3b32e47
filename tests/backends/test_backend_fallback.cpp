// The Backend interface's fallback: a backend with only the core kernels (CoreOnlyBackend) runs the
// fused ops (LayerNorm family, attention, cross-entropy, softmax, dropout, conv/pool, Adam) through
// CompositeKernels, forward and backward, and matches the CPU backend's own fused kernels. Also: the
// built-in backends are reachable from a static link, and a missing device is a clear error.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "autograd/functions.h"
#include "backends/core_only_backend.h"
#include "optim/optimizer.h"
#include "norm_variants.h"

using namespace nl;
using nltest::FakeDevice;

namespace {
const Device kFake = Device::cuda(0);

// Largest |a - b| relative to max(1, max |b|), on host copies.
double rel_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  double m = 0, s = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isinf(y[i]) || std::isinf(x[i])) {
      REQUIRE(x[i] == y[i]);
      continue;
    }
    m = std::max(m, std::abs(x[i] - y[i]));
    s = std::max(s, std::abs(y[i]));
  }
  return m / s;
}
// Runs body(dev, kernels) on the CPU backend's own fused kernels, then on the composite ones (a fake
// device with only the core kernels), naming which in the failure messages.
template <typename F>
void on_cpu_and_composite(F&& body) {
  for (bool composite : {false, true}) {
    INFO((composite ? "composite" : "cpu"));
    std::optional<FakeDevice> fd;
    if (composite) fd.emplace();
    const Device dev = composite ? kFake : Device::cpu();
    body(dev, backend_for(dev.type).fused());
  }
}
double tol(DType t) { return t == DType::Float64 ? 1e-12 : 2e-5; }

struct FwdBwd {
  Tensor y;
  std::vector<Tensor> grads;
};
// y = f(inputs on `dev`), loss = sum(y * w), backward; everything returned on the CPU.
template <typename F>
FwdBwd run_on(Device dev, const std::vector<Tensor>& inputs, const Tensor& w, F&& f) {
  std::vector<Variable> vs;
  for (const Tensor& t : inputs) vs.emplace_back(t.to(dev).clone(), true);
  Variable y = f(vs);
  sum(y * Variable(w.to(dev))).backward();
  FwdBwd r{y.data().to(Device::cpu()), {}};
  for (auto& v : vs) r.grads.push_back(v.grad().to(Device::cpu()));
  return r;
}
template <typename F>
void check_same_on_both(const std::vector<Tensor>& inputs, const Shape& out_shape, DType dt, F&& f) {
  Tensor w = Tensor::randn(out_shape, 0, 1, dt);
  manual_seed(7);
  FwdBwd cpu = run_on(Device::cpu(), inputs, w, f);
  FwdBwd fake;
  {
    FakeDevice fd;
    REQUIRE_FALSE(backend_for(DeviceType::CUDA).has_own_fused());
    manual_seed(7);
    fake = run_on(kFake, inputs, w, f);
  }
  CHECK(rel_diff(fake.y, cpu.y) <= tol(dt));
  for (size_t i = 0; i < cpu.grads.size(); ++i) CHECK(rel_diff(fake.grads[i], cpu.grads[i]) <= tol(dt));
}
}  // namespace

TEST_CASE("backend fallback: the CPU backend has its own fused kernels", "[backend][fallback]") {
  CHECK(backend_for(DeviceType::CPU).has_own_fused());
  nltest::CoreOnlyBackend core;
  CHECK_FALSE(core.has_own_fused());
}

TEST_CASE("backend fallback: composite LayerNorm family matches the fused CPU kernel", "[backend][fallback]") {
  for (DType dt : {DType::Float64, DType::Float32})
    for (int variant = 0; variant < nltest::kNormVariants; ++variant) {
      const LayerNormOptions o = nltest::norm_variant(variant);
      INFO("variant " << variant << " " << dtype_name(dt));
      Tensor x = Tensor::randn({6, 11}, 0.5, 2.0, dt);
      check_same_on_both({x}, {6, 11}, dt, [&](const std::vector<Variable>& v) { return layer_norm_fused(v[0], o); });
      // With the gain and bias of Eq. 1 inside the kernel (their gradients from the same call), and gain alone.
      Tensor g = Tensor::randn({11}, 1.0, 0.5, dt), b = Tensor::randn({11}, 0.0, 1.0, dt);
      check_same_on_both({x, g, b}, {6, 11}, dt,
                         [&](const std::vector<Variable>& v) { return layer_norm_fused(v[0], o, v[1], v[2]); });
      check_same_on_both({x, g}, {6, 11}, dt,
                         [&](const std::vector<Variable>& v) { return layer_norm_fused(v[0], o, v[1]); });
    }
}

TEST_CASE("backend fallback: composite LayerNorm over NCHW channel groups matches the fused CPU kernel",
          "[backend][fallback]") {
  for (DType dt : {DType::Float64, DType::Float32})
    for (int variant = 0; variant < nltest::kNormVariants; ++variant) {
      const LayerNormOptions o = nltest::norm_variant(variant);
      INFO("variant " << variant << " " << dtype_name(dt));
      // 65 pixels: a tile of 64 and a tail. Groups of 4 and 6 values: groups of 2 or 3 are too often nearly
      // constant, where the composite's mean rounded to float32 (the CPU keeps its double remainder) moves
      // float32 gradients by more than the rounding bound.
      Tensor x = Tensor::randn({3, 12, 5, 13}, 0.5, 2.0, dt);
      Tensor g = Tensor::randn({12}, 1.0, 0.5, dt), b = Tensor::randn({12}, 0.0, 1.0, dt);
      check_same_on_both({x, g, b}, {3, 12, 5, 13}, dt, [&](const std::vector<Variable>& v) {
        return layer_norm_channels_fused(v[0], 3, o, v[1], v[2]);
      });
      check_same_on_both({x}, {3, 12, 5, 13}, dt,
                         [&](const std::vector<Variable>& v) { return layer_norm_channels_fused(v[0], 2, o); });
    }
}

TEST_CASE("backend fallback: composite BatchNorm over the channels of images matches the fused CPU kernel",
          "[backend][fallback]") {
  for (DType dt : {DType::Float64, DType::Float32}) {
    INFO(dtype_name(dt));
    Tensor x = Tensor::randn({3, 5, 4, 7}, 0.5, 2.0, dt);
    Tensor g = Tensor::randn({5}, 1.0, 0.5, dt), b = Tensor::randn({5}, 0.0, 1.0, dt);
    check_same_on_both({x, g, b}, {3, 5, 4, 7}, dt, [&](const std::vector<Variable>& v) {
      return batch_norm_channels_fused(v[0], 1e-5, v[1], v[2]).y;
    });
    check_same_on_both({x}, {3, 5, 4, 7}, dt,
                       [&](const std::vector<Variable>& v) { return batch_norm_channels_fused(v[0], 1e-5).y; });
  }
}

TEST_CASE("backend fallback: composite attention matches the fused CPU kernels with masks and dropout",
          "[backend][fallback]") {
  const int64_t B = 2, H = 3, Tq = 4, Tk = 5, dh = 3;
  for (DType dt : {DType::Float64, DType::Float32})
    // Variant 2: dropout 0.3, the masks regenerated from the same counters on both backends.
    for (int variant = 0; variant < 3; ++variant) {
      INFO("variant " << variant << " " << dtype_name(dt));
      AttentionOptions o;
      o.training = true;
      o.dropout = variant == 2 ? 0.3 : 0.0;
      o.causal = variant >= 1;
      std::vector<double> pad(B * Tk, 0.0);
      pad[Tk - 1] = 1;                                   // last key of batch 0 padded
      for (int64_t j = 0; j < Tk; ++j) pad[Tk + j] = 1;  // batch 1 fully padded: zero weights
      o.key_padding_mask = Tensor::from_vector(pad, {B, Tk}).to(DType::Int64);
      std::vector<double> am = Tensor::randn({Tq, Tk}, 0, 1, DType::Float64).to_vector<double>();
      am[1] = -INFINITY;
      o.attn_mask = Tensor::from_vector(am, {Tq, Tk}).to(dt);
      Tensor q = Tensor::randn({B, H, Tq, dh}, 0, 1, dt), k = Tensor::randn({B, H, Tk, dh}, 0, 1, dt),
             v = Tensor::randn({B, H, Tk, dh}, 0, 1, dt);
      check_same_on_both({q, k, v}, {B, H, Tq, dh}, dt, [&](const std::vector<Variable>& x) {
        AttentionOptions oo = o;
        oo.key_padding_mask = o.key_padding_mask.to(x[0].data().device());
        oo.attn_mask = o.attn_mask.to(x[0].data().device());
        return attention(x[0], x[1], x[2], oo);
      });
    }
}

TEST_CASE("backend fallback: composite cross-entropy with smoothing and ignore_index matches the CPU",
          "[backend][fallback]") {
  for (DType dt : {DType::Float64, DType::Float32}) {
    Tensor logits = Tensor::randn({7, 5}, 0, 3, dt);
    Tensor target = Tensor::from_vector<int64_t>({0, 4, 2, -100, 1, 3, 4}, {7});
    check_same_on_both({logits}, {}, dt, [&](const std::vector<Variable>& x) {
      return cross_entropy(x[0], target.to(x[0].data().device()), 0.1, -100);
    });
  }
}

TEST_CASE("backend fallback: composite softmax and dropout and the FFN activation and conv and pool match the CPU", "[backend][fallback]") {
  const DType dt = DType::Float64;
  Tensor x = Tensor::randn({3, 7}, 0, 2, dt);
  check_same_on_both({x}, {3, 7}, dt, [](const std::vector<Variable>& v) { return softmax(v[0]); });
  check_same_on_both({x}, {3, 7}, dt, [](const std::vector<Variable>& v) { return log_softmax(v[0]); });
  check_same_on_both({x}, {3, 7}, dt, [](const std::vector<Variable>& v) { return dropout(v[0], 0.4, true); });
  Tensor x2 = Tensor::randn({3, 7}, 0, 1, dt);
  check_same_on_both({x, x2}, {3, 7}, dt, [](const std::vector<Variable>& v) { return dropout_add(v[0], v[1], 0.4, true); });
  Tensor w1 = Tensor::randn({5, 7}, 0, 1, dt), b1 = Tensor::randn({5}, 0, 1, dt), w2 = Tensor::randn({7, 5}, 0, 1, dt),
         b2 = Tensor::randn({7}, 0, 1, dt);
  for (double p : {0.0, 0.4})
    check_same_on_both({x, w1, b1, w2, b2}, {3, 7}, dt, [p](const std::vector<Variable>& v) {
      return ffn_relu(v[0], v[1], v[2], v[3], v[4], p, true, 2);  // blocks of 2 rows
    });
  Tensor img = Tensor::randn({2, 3, 7, 6}, 0, 1, dt), w = Tensor::randn({4, 3, 3, 3}, 0, 1, dt),
         b = Tensor::randn({4}, 0, 1, dt);
  check_same_on_both({img, w, b}, {2, 4, 4, 3}, dt, [](const std::vector<Variable>& v) {
    return conv2d(v[0], v[1], v[2], 2, 1);
  });
  check_same_on_both({img}, {2, 3, 4, 4}, dt, [](const std::vector<Variable>& v) { return max_pool2d(v[0], 2, 2, 1); });
}

TEST_CASE("backend fallback: dropout_add writing over its residual or its input equals a fresh output", "[backend][fallback]") {
  // The kernel contract lets out alias residual or in; the composite drops into scratch when out is the
  // residual, which its add still reads.
  const int64_t n = 37;
  Tensor r = Tensor::randn({n}, 0, 1, DType::Float64), x = Tensor::randn({n}, 0, 1, DType::Float64);
  on_cpu_and_composite([&](const Device& dev, FusedKernels& k) {
    Tensor rd = r.to(dev), xd = x.to(dev), fresh = Tensor::empty({n}, DType::Float64, dev);
    k.dropout_add(fresh.desc(), rd.desc(), xd.desc(), 0.4, 11, 5);
    Tensor over_r = rd.clone(), over_x = xd.clone();
    k.dropout_add(over_r.desc(), over_r.desc(), xd.desc(), 0.4, 11, 5);
    k.dropout_add(over_x.desc(), rd.desc(), over_x.desc(), 0.4, 11, 5);
    const auto want = fresh.to(Device::cpu()).to_vector<double>();
    CHECK(over_r.to(Device::cpu()).to_vector<double>() == want);
    CHECK(over_x.to(Device::cpu()).to_vector<double>() == want);
    int dropped = 0;  // out = r where dropped, r + x / 0.6 where kept
    const auto rv = r.to_vector<double>(), xv = x.to_vector<double>();
    for (int64_t i = 0; i < n; ++i) {
      if (want[i] == rv[i]) ++dropped;
      else CHECK(want[i] == Approx(rv[i] + xv[i] / 0.6).epsilon(1e-14));
    }
    CHECK(dropped > 0);
    CHECK(dropped < n);
  });
}

TEST_CASE("backend fallback: the FFN activation writes and reads bfloat16 beside float32, bit for bit the float32 "
          "kernel and a cast, on the CPU and composite",
          "[backend][fallback][bf16]") {
  // Autocast's FFN: the hidden block written rounded once to bfloat16, read back as the saved output,
  // and its gradient written in bfloat16 for fc1's products; the bias gradient summed before rounding.
  const int64_t R = 9, N = 37;  // rows of one 32-lane block and a tail
  manual_seed(3);
  const Tensor x = Tensor::randn({R, N}), bias = Tensor::randn({N});
  Tensor gout = Tensor::randn({R, N});
  {  // gradients whose bfloat16 rounding is special: subnormal (flushed by vcvtne2ps2bf16, redone), NaN, -0
    float* g = gout.data<float>();
    g[3] = 1e-39f, g[N + 20] = -3e-39f, g[2 * N + 7] = std::nanf(""), g[4 * N + 33] = -0.0f, g[5 * N + 1] = 1e-38f;
  }
  on_cpu_and_composite([&](const Device& dev, FusedKernels& k) {
    const Tensor xd = x.to(dev), bd = bias.to(dev), gd = gout.to(dev);
    for (double p : {0.0, 0.3}) {
      INFO("p " << p);
      Tensor y32 = Tensor::empty({R, N}, DType::Float32, dev), y16 = Tensor::empty({R, N}, DType::BFloat16, dev);
      k.bias_relu_dropout(y32.desc(), xd.desc(), bd.desc(), p, 7, 11);
      k.bias_relu_dropout(y16.desc(), xd.desc(), bd.desc(), p, 7, 11);
      CHECK(y16.to(Device::cpu()).to_vector<float>() == y32.to(DType::BFloat16).to(Device::cpu()).to_vector<float>());
      // backward from the bfloat16 output, float32 or bfloat16 gradient: the float32 one from the widened
      // output, then (for bfloat16 gx) one rounding; the bias gradient is the float32 one either way.
      const Tensor yw = y16.to(DType::Float32);
      Tensor g_ref = Tensor::empty({R, N}, DType::Float32, dev), gb_ref = Tensor::empty({N}, DType::Float32, dev);
      k.bias_relu_dropout_backward(g_ref.desc(), gb_ref.desc(), gd.desc(), yw.desc(), p);
      for (DType gt : {DType::Float32, DType::BFloat16}) {
        INFO("gx " << dtype_name(gt));
        Tensor g = Tensor::empty({R, N}, gt, dev), gb = Tensor::empty({N}, DType::Float32, dev);
        k.bias_relu_dropout_backward(g.desc(), gb.desc(), gd.desc(), y16.desc(), p);
        CHECK(g.to(Device::cpu()).to_vector<float>() == g_ref.to(gt).to(Device::cpu()).to_vector<float>());
        CHECK(gb.to(Device::cpu()).to_vector<float>() == gb_ref.to(Device::cpu()).to_vector<float>());
      }
    }
    // bfloat16 is only the stored side: a bfloat16 input (or gradient) or a float64 pair with it is refused.
    Tensor x16 = xd.to(DType::BFloat16), y = Tensor::empty({R, N}, DType::BFloat16, dev);
    CHECK_THROWS_WITH(k.bias_relu_dropout(y.desc(), x16.desc(), Desc{}, 0.0, 1, 0),
                      Catch::Matchers::Contains("float32 or float64"));
    const Tensor x64 = xd.to(DType::Float64);
    CHECK_THROWS_WITH(k.bias_relu_dropout(y.desc(), x64.desc(), Desc{}, 0.0, 1, 0),
                      Catch::Matchers::Contains("bfloat16 beside float32"));
  });
  // The op front end: the same rule, and a clear error.
  Tensor out16 = Tensor::empty({R, N}, DType::BFloat16);
  CHECK_NOTHROW(bias_relu_dropout_out(out16, x, bias, 0.2, 1, 0));
  Tensor x16 = x.to(DType::BFloat16);
  CHECK_THROWS_WITH(bias_relu_dropout_out(out16, x16, Tensor(), 0.2, 1, 0),
                    Catch::Matchers::Contains("does not take bfloat16"));
}

TEST_CASE("backend fallback: composite Adam step matches the fused CPU kernel", "[backend][fallback]") {
  for (bool decoupled : {false, true}) {
    Tensor p0 = Tensor::randn({13}, 0, 1, DType::Float64), g = Tensor::randn({13}, 0, 1, DType::Float64);
    AdamKernelOpts o{1e-2, 0.9, 0.98, 1e-8, 0.1, decoupled, 3};
    Tensor p1 = p0.clone(), m1 = Tensor::full({13}, 0.1, DType::Float64), v1 = Tensor::full({13}, 0.2, DType::Float64);
    Tensor p2 = p0.clone(), m2 = m1.clone(), v2 = v1.clone();
    cpu_backend().adam_step(p1.desc(), g.desc(), m1.desc(), v1.desc(), o);
    nltest::CoreOnlyBackend core;
    core.fused().adam_step(p2.desc(), g.desc(), m2.desc(), v2.desc(), o);
    CHECK(rel_diff(p2, p1) <= 1e-13);
    CHECK(rel_diff(m2, m1) <= 1e-13);
    CHECK(rel_diff(v2, v1) <= 1e-13);
  }
}

TEST_CASE("backend fallback: a composite cross-entropy target out of range names the index", "[backend][fallback]") {
  nltest::CoreOnlyBackend core;
  Tensor logits = Tensor::randn({2, 3}), stats = Tensor::empty({2, 2}), loss = Tensor::empty({2});
  Tensor target = Tensor::from_vector<int64_t>({1, 3}, {2});
  // Found by the gather on the device (no host copy of the targets), as an asynchronous device reports it.
  auto run = [&] {
    core.fused().cross_entropy(loss.desc(), stats.desc(), logits.desc(), target.desc(), -100, 0.0, Desc{}, 0.0);
  };
  CHECK_THROWS_AS(run(), std::out_of_range);
  CHECK_THROWS_WITH(run(), Catch::Contains("index 3 out of range"));
}

TEST_CASE("backend registry: built-in backends survive static linking and a missing GPU is a clear error",
          "[backend][registry]") {
  // normlab_tests links libnormlab.a statically: the CPU (and, when compiled in, the CUDA) backend must be
  // reachable without any other reference to their translation units.
  CHECK(backend_built(DeviceType::CPU));
  CHECK(&backend_for(DeviceType::CPU) == static_cast<Backend*>(&cpu_backend()));
#ifdef NORMLAB_WITH_CUDA
  CHECK(backend_built(DeviceType::CUDA));
  CHECK(backend_for(DeviceType::CUDA).type() == DeviceType::CUDA);
#else
  CHECK_FALSE(backend_built(DeviceType::CUDA));
#endif
  if (device_count(DeviceType::CUDA) == 0) {
    CHECK_FALSE(backend_available(DeviceType::CUDA));
    CHECK_THROWS_WITH(check_device(Device::cuda(0)),
                      Catch::Contains("no CUDA device") && Catch::Contains("use --device cpu"));
    CHECK_THROWS_WITH(Tensor::zeros({2}, DType::Float32, Device::cuda(0)), Catch::Contains("no CUDA device"));
  }
  {
    FakeDevice fd;  // a registered backend overrides the built-in one and counts as one device
    CHECK(backend_available(DeviceType::CUDA));
    CHECK_THROWS_WITH(check_device(Device::cuda(1)), Catch::Contains("cuda:1 does not exist"));
  }
}
