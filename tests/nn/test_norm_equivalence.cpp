// Composite (primitive ops + detach nodes) and fused (closed-form backward) implementations of every
// LayerNorm variant and AdaNorm agree on forward values and on the gradients of the input and of the
// gain/bias, in float64, under both estimator settings:
//   paper: biased std (1/H), eps inside the sqrt, eps = 0 (and eps = 1e-12);
//   code:  unbiased std (1/(H-1)), eps added to the std, eps = 1e-5 (lancopku/AdaNorm, seed-code §1.1).
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;

namespace {
struct Setting {
  const char* label;
  nlohmann::json opts;
};
const std::vector<Setting> kSettings{
    {"paper eps=0", {{"unbiased", false}, {"eps_inside", true}, {"eps", 0.0}}},
    {"paper eps=1e-12", {{"unbiased", false}, {"eps_inside", true}, {"eps", 1e-12}}},
    {"code", {{"unbiased", true}, {"eps_inside", false}, {"eps", 1e-5}}},
    {"torch", {{"unbiased", false}, {"eps_inside", true}, {"eps", 1e-5}}},
};

std::shared_ptr<Module> build(const std::string& name, int64_t H, nlohmann::json opts, const char* impl) {
  opts["impl"] = impl;
  opts["dtype"] = "float64";
  if (name == "adanorm") {
    opts.erase("dtype");
    opts["C"] = 2.0;
  }
  return make_norm(name, H, opts);
}
}  // namespace

TEST_CASE("norm: composite and fused agree on forward and gradients (float64, 1e-10)", "[nn][norm]") {
  const int64_t H = 16;
  for (const auto& name : layernorm_family_names()) {
    if (name == "none") continue;
    for (const auto& s : kSettings) {
      INFO(name << " / " << s.label);
      manual_seed(11);
      auto comp = build(name, H, s.opts, "composite");
      auto fused = build(name, H, s.opts, "fused");
      // Non-trivial gain/bias, the same in both.
      for (auto& p : comp->parameters()) {
        Tensor t = p.data();
        t.copy_(Tensor::randn(t.shape(), 1.0, 0.5, DType::Float64));
      }
      fused->load_state_dict(comp->state_dict());
      // Input with a per-row offset and scale, seen through a transpose (non-contiguous).
      Tensor base = Tensor::randn({H, 3, 5}, 0.0, 1.0, DType::Float64);
      Tensor xs = nl::add(nl::mul(base, Tensor::rand({1, 3, 5}, 0.2, 3.0, DType::Float64)),
                          Tensor::randn({1, 3, 5}, 2.0, 1.0, DType::Float64));
      Tensor g = Tensor::randn({5, 3, H}, 0.3, 1.0, DType::Float64);
      Variable x1(xs.clone(), true), x2(xs.clone(), true);
      Variable y1 = comp->forward(permute(x1, {2, 1, 0}));
      Variable y2 = fused->forward(permute(x2, {2, 1, 0}));
      CHECK(max_abs_diff(y1.data(), y2.data()) < 1e-10);
      y1.backward(g);
      y2.backward(g);
      CHECK(max_abs(x1.grad()) > 1e-3);
      CHECK(max_abs_diff(x1.grad(), x2.grad()) < 1e-10);
      auto p1 = comp->named_parameters(), p2 = fused->named_parameters();
      REQUIRE(p1.size() == p2.size());
      for (size_t i = 0; i < p1.size(); ++i) CHECK(max_abs_diff(p1[i].second.grad(), p2[i].second.grad()) < 1e-10);
    }
  }
}

TEST_CASE("norm: forward against the definitions of each estimator", "[nn][norm]") {
  Tensor x = Tensor::from_vector<double>({1, 2, 4, 7}, {1, 4});  // mu 3.5, sum sq dev 21
  for (const char* impl : {"composite", "fused"}) {
    INFO(impl);
    auto paper = make_norm("layernorm-simple", 4, {{"impl", impl}, {"eps", 0.0}});
    auto code = make_norm("layernorm-simple", 4, {{"impl", impl}, {"eps", 0.5}, {"unbiased", true}, {"eps_inside", false}});
    auto torch = make_norm("layernorm-simple", 4, {{"impl", impl}, {"eps", 0.5}});
    auto yp = vals(paper->forward(Variable(x)).data());
    auto yc = vals(code->forward(Variable(x)).data());
    auto yt = vals(torch->forward(Variable(x)).data());
    const std::vector<double> d{-2.5, -1.5, 0.5, 3.5};
    for (int i = 0; i < 4; ++i) {
      CHECK(yp[i] == Approx(d[i] / std::sqrt(21.0 / 4)).epsilon(1e-14));
      CHECK(yc[i] == Approx(d[i] / (std::sqrt(21.0 / 3) + 0.5)).epsilon(1e-14));
      CHECK(yt[i] == Approx(d[i] / std::sqrt(21.0 / 4 + 0.5)).epsilon(1e-14));
    }
    // All variants share the forward: detaching changes only gradients.
    for (const char* v : {"detachnorm", "detach-mean", "detach-variance"}) {
      auto yv = vals(make_norm(v, 4, {{"impl", impl}, {"eps", 0.0}})->forward(Variable(x)).data());
      for (int i = 0; i < 4; ++i) CHECK(yv[i] == Approx(yp[i]).epsilon(1e-15));
    }
    // LayerNorm with gain and bias: z = g ⊙ y + b (Eq. 1).
    auto ln = std::dynamic_pointer_cast<LayerNorm>(make_norm("layernorm", 4, {{"impl", impl}, {"eps", 0.0}, {"dtype", "float64"}}));
    {
      Tensor w = ln->weight.data(), b = ln->bias.data();
      w.copy_(Tensor::from_vector<double>({1, 2, 3, 4}, {4}));
      b.copy_(Tensor::from_vector<double>({0, 1, 0, -1}, {4}));
    }
    auto z = vals(ln->forward(Variable(x)).data());
    const std::vector<double> gw{1, 2, 3, 4}, bb{0, 1, 0, -1};
    for (int i = 0; i < 4; ++i) CHECK(z[i] == Approx(gw[i] * yp[i] + bb[i]).epsilon(1e-14));
  }
}

TEST_CASE("norm: gradcheck of the non-detached members (LayerNorm, LayerNorm-simple) in both impls", "[nn][norm][gradcheck]") {
  manual_seed(12);
  using Vs = std::vector<Variable>;
  for (const char* impl : {"composite", "fused"})
    for (const auto& s : kSettings) {
      if (std::string(s.label) == "paper eps=1e-12") continue;
      INFO(impl << " / " << s.label);
      nlohmann::json o = s.opts;
      o["impl"] = impl;
      o["dtype"] = "float64";
      auto ln = make_norm("layernorm", 7, o);
      auto simple = make_norm("layernorm-simple", 7, o);
      Variable x = leaf({3, 7}, 1.0, 2.0);
      Vs in{x};
      for (auto& p : ln->parameters()) in.push_back(p);
      NL_GRADCHECK([&](const Vs& v) { return ln->forward(v[0]); }, in);
      NL_GRADCHECK([&](const Vs& v) { return simple->forward(v[0]); }, Vs{x});
    }
}

TEST_CASE("norm: composite and fused agree in float32 and on the multi-threaded path", "[nn][norm][threads2]") {
  manual_seed(13);
  for (const auto& name : layernorm_family_names()) {
    if (name == "none") continue;
    // float32, the training dtype: agreement to float rounding. 29 rows of 50: the fused kernel's last
    // block of rows is partial and each row ends in a tail shorter than a vector.
    {
      INFO(name << " float32");
      auto comp = make_norm(name, 50, {{"impl", "composite"}});
      auto fused = make_norm(name, 50, {{"impl", "fused"}});
      Tensor x = Tensor::randn({29, 50}, 0.5, 2.0);
      Tensor g = Tensor::randn({29, 50});
      Variable x1(x.clone(), true), x2(x.clone(), true);
      Variable y1 = comp->forward(x1), y2 = fused->forward(x2);
      CHECK(y1.dtype() == DType::Float32);
      CHECK(max_abs_diff(y1.data(), y2.data()) < 1e-5);
      y1.backward(g);
      y2.backward(g);
      CHECK(max_abs_diff(x1.grad(), x2.grad()) < 1e-5);
    }
    // Many rows of width 512 (large enough for the OpenMP-parallel kernels), float64.
    {
      INFO(name << " [96, 512] float64");
      const nlohmann::json o{{"eps", 1e-5}, {"unbiased", true}, {"eps_inside", false}, {"dtype", "float64"}};
      nlohmann::json oc = o, of = o;
      oc["impl"] = "composite";
      of["impl"] = "fused";
      auto comp = make_norm(name, 512, oc), fused = make_norm(name, 512, of);
      for (auto& p : comp->parameters()) {  // a gain and bias that matter (the fused kernel sums their grads)
        Tensor t = p.data();
        t.copy_(Tensor::randn(t.shape(), 1.0, 0.5, DType::Float64));
      }
      fused->load_state_dict(comp->state_dict());
      Tensor x = Tensor::randn({96, 512}, 1.0, 3.0, DType::Float64);
      Tensor g = Tensor::randn({96, 512}, 0.1, 1.0, DType::Float64);
      Variable x1(x.clone(), true), x2(x.clone(), true);
      Variable y1 = comp->forward(x1), y2 = fused->forward(x2);
      CHECK(max_abs_diff(y1.data(), y2.data()) < 1e-10);
      y1.backward(g);
      y2.backward(g);
      CHECK(max_abs_diff(x1.grad(), x2.grad()) < 1e-10);
      auto p1 = comp->named_parameters(), p2 = fused->named_parameters();
      REQUIRE(p1.size() == p2.size());
      for (size_t i = 0; i < p1.size(); ++i) CHECK(max_abs_diff(p1[i].second.grad(), p2[i].second.grad()) < 1e-9);
    }
  }
}

TEST_CASE("norm: near-constant float32 rows, both impls within float32 rounding of the float64 result",
          "[nn][norm]") {
  // Rows with |mean| >> std (1000 + noise of 1e-2): a float32 row mean keeps ~4 significant digits of
  // x - mu, so the composite path lost ~2.5e-4 relative accuracy in dx before it computed its statistics in
  // float64 (issue 28); the fused kernel always accumulated in double.
  manual_seed(29);
  for (const auto& name : layernorm_family_names()) {
    if (name == "none") continue;
    const Tensor x32 = Tensor::randn({16, 64}, 1000.0, 1e-2);
    const Tensor g64 = Tensor::randn({16, 64}, 0.0, 1.0, DType::Float64).to(DType::Float32).to(DType::Float64);
    // Reference: the float64 module on the same float32 inputs and output gradient.
    Variable xr32(x32.to(DType::Float64), true);
    auto ref32 = make_norm(name, 64, {{"impl", "fused"}, {"dtype", "float64"}});
    Variable yref = ref32->forward(xr32);
    yref.backward(g64);
    for (const char* impl : {"composite", "fused"}) {
      INFO(name << " " << impl);
      auto m = make_norm(name, 64, {{"impl", impl}});
      Variable x(x32.clone(), true);
      Variable y = m->forward(x);
      CHECK(y.dtype() == DType::Float32);
      CHECK(max_abs_diff(y.data().to(DType::Float64), yref.data()) < 2e-6 * (1 + max_abs_diff(yref.data(), Tensor::zeros({16, 64}, DType::Float64))));
      y.backward(g64.to(DType::Float32));
      REQUIRE(x.grad().dtype() == DType::Float32);
      const double scale = max_abs_diff(xr32.grad(), Tensor::zeros({16, 64}, DType::Float64));
      CHECK(max_abs_diff(x.grad().to(DType::Float64), xr32.grad()) < 2e-6 * scale);
    }
  }
}
