// BatchNorm with padding masks (and the released MaskSyncBatchNorm) and PN-V: known values against
// torch, float64 gradchecks with and without padding, pads not touching any statistic, eval on running
// statistics, state_dict buffers, errors; the padding-mask entry point norm_forward.
// PowerNorm (PN) has its own file, test_power_norm.cpp.
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector<double>(v, s); }

void set_affine(Module& m, const std::vector<double>& w, const std::vector<double>& b) {
  const int64_t d = (int64_t)w.size();
  assign(m.param("weight"), f64(w, {d}));
  assign(m.param("bias"), f64(b, {d}));
}

// A [2, 3, 4] batch whose second sequence has two padding tokens, and its mask.
Tensor padded_mask() { return f64({0, 0, 0, 0, 1, 1}, {2, 3}); }

// The rows of x [B, T, D] where mask == 0, as [n, D].
Tensor kept_rows(const Tensor& x, const Tensor& mask) {
  const int64_t D = x.size(-1);
  auto xv = vals(x), mv = vals(mask);
  std::vector<double> out;
  for (size_t r = 0; r < mv.size(); ++r)
    if (mv[r] == 0) out.insert(out.end(), xv.begin() + (long)(r * D), xv.begin() + (long)((r + 1) * D));
  return f64(out, {(int64_t)out.size() / D, D});
}

std::shared_ptr<MaskedNorm> masked(const std::string& name, int64_t d, nlohmann::json o = nlohmann::json::object()) {
  o["dtype"] = "float64";
  auto m = std::dynamic_pointer_cast<MaskedNorm>(make_norm(name, d, o));
  REQUIRE(m);
  return m;
}
}  // namespace

TEST_CASE("batchnorm: two training steps and eval equal torch.nn.BatchNorm1d", "[nn][norm][batchnorm]") {
  // Reference: torch 1.13, float64, BatchNorm1d(3, momentum=0.1, eps=1e-5) with weight [1.5, -0.5, 2]
  // and bias [0.1, 0.2, -0.3]; y1 = bn(x1), y2 = bn(x2) in train mode, then bn.eval()(x1[:2])
  // (/usr/bin/python3 script, values printed with tolist()).
  auto bn = masked("batchnorm", 3);
  set_affine(*bn, {1.5, -0.5, 2.0}, {0.1, 0.2, -0.3});
  const Tensor x1 = f64({1, 2, -1, 3, -1, 0.5, 0, 4, 2, -2, 1, 1.5}, {4, 3});
  const Tensor x2 = f64({0.5, -2, 3, 1.5, 0, -1, 2.5, 2, 0}, {3, 3});
  const std::vector<double> y1{0.5160245071317109,  0.06132516428942969, -3.355038825082918,  2.1801225356585547,
                               0.8933741785528515,  -0.7364341178689883, -0.31602450713171093, -0.4933741785528515,
                               1.8821705893449414,  -1.9801225356585546, 0.3386748357105703,  1.009302353606965};
  const std::vector<double> y2{-1.7371035288625853, 0.812371287500707, 2.4456211399021,    0.09999999999999987, 0.2,
                               -2.2611579570729288, 1.937103528862585, -0.4123712875007069, -1.0844631828291715};
  auto got1 = vals(bn->forward(Variable(x1)).data());
  auto got2 = vals(bn->forward(Variable(x2)).data());
  for (size_t i = 0; i < y1.size(); ++i) CHECK(got1[i] == Approx(y1[i]).margin(1e-12));
  for (size_t i = 0; i < y2.size(); ++i) CHECK(got2[i] == Approx(y2[i]).margin(1e-12));
  const std::vector<double> rm{0.195, 0.135, 0.13416666666666668}, rv{1.3, 1.6, 1.4008333333333334};
  auto grm = vals(bn->buffer("running_mean")), grv = vals(bn->buffer("running_var"));
  for (int i = 0; i < 3; ++i) {
    CHECK(grm[i] == Approx(rm[i]).margin(1e-14));
    CHECK(grv[i] == Approx(rv[i]).margin(1e-14));
  }
  CHECK(bn->buffer("num_batches_tracked").item() == 2);
  bn->eval();
  const std::vector<double> ye{1.1590434850768974, -0.5372036757688663, -2.216514418821558,
                               3.790207423156146,  0.6486467410175139,  0.31818503296301537};
  auto gote = vals(bn->forward(Variable(x1.slice(0, 0, 2))).data());
  for (size_t i = 0; i < ye.size(); ++i) CHECK(gote[i] == Approx(ye[i]).margin(1e-12));
  CHECK(bn->buffer("num_batches_tracked").item() == 2);  // eval updates nothing
}

TEST_CASE("batchnorm and powernorm-v: pads change no statistic and no non-pad output", "[nn][norm][batchnorm]") {
  for (const char* name : {"batchnorm", "powernorm-v"}) {
    INFO(name);
    manual_seed(5);
    const Tensor x = Tensor::randn({2, 3, 4}, 0.5, 2.0, DType::Float64), mask = padded_mask();
    Tensor x_other = x.clone();  // same tokens, different values at the two pads
    x_other.slice(0, 1, 2).slice(1, 1, 3).copy_(Tensor::randn({1, 2, 4}, 50.0, 10.0, DType::Float64));
    auto a = masked(name, 4), b = masked(name, 4), ref = masked(name, 4);
    Tensor ya = a->forward(Variable(x), mask).data(), yb = b->forward(Variable(x_other), mask).data();
    // Non-pad outputs equal the same norm run on the non-pad tokens alone.
    Tensor yr = ref->forward(Variable(kept_rows(x, mask))).data();
    CHECK(max_abs_diff(kept_rows(ya, mask), yr) < 1e-12);
    CHECK(max_abs_diff(kept_rows(yb, mask), yr) < 1e-12);
    for (auto& [key, t] : a->named_buffers()) CHECK(max_abs_diff(t.to(DType::Float64), ref->buffer(key).to(DType::Float64)) < 1e-14);
    for (auto& [key, t] : b->named_buffers()) CHECK(max_abs_diff(t.to(DType::Float64), ref->buffer(key).to(DType::Float64)) < 1e-14);
    // ... whereas without the mask the pads do count.
    auto c = masked(name, 4);
    CHECK(max_abs_diff(kept_rows(c->forward(Variable(x_other)).data(), mask), yr) > 1e-2);
  }
}

TEST_CASE("batchnorm and powernorm-v: float64 gradcheck with and without padding", "[nn][norm][batchnorm][grad]") {
  for (const char* name : {"batchnorm", "powernorm-v"})
    for (bool pad : {false, true}) {
      INFO(name << (pad ? " padded" : " no padding"));
      manual_seed(7);
      auto norm = masked(name, 4);
      set_affine(*norm, {1.2, -0.7, 0.9, 2.0}, {0.1, 0.0, -0.2, 0.3});
      const Tensor mask = pad ? padded_mask() : Tensor();
      Variable x = leaf({2, 3, 4}, 0.3, 1.5);
      NL_GRADCHECK([&](const std::vector<Variable>& in) { return norm->forward(in[0], mask); }, {x});
      // gain and bias too
      Variable w = norm->param("weight"), b = norm->param("bias");
      NL_GRADCHECK([&](const std::vector<Variable>&) { return norm->forward(Variable(x.data()), mask); }, {w, b});
    }
  manual_seed(8);
  auto img = masked("batchnorm", 3);
  NL_GRADCHECK([&](const std::vector<Variable>& in) { return img->forward(in[0]); }, {leaf({2, 3, 2, 2}, 0.0, 1.0)});
}

TEST_CASE("batchnorm: images use statistics over N, H and W per channel", "[nn][norm][batchnorm]") {
  manual_seed(9);
  const Tensor x = Tensor::randn({2, 3, 2, 2}, 1.0, 2.0, DType::Float64);
  auto img = masked("batchnorm", 3), rows = masked("batchnorm", 3);
  Tensor y = img->forward(Variable(x)).data();
  Tensor want = rows->forward(Variable(x.permute({0, 2, 3, 1}).reshape({8, 3}))).data();
  CHECK(max_abs_diff(y.permute({0, 2, 3, 1}).reshape({8, 3}), want) < 1e-14);
}

TEST_CASE("batchnorm released: layer scaling, pads filled with the mean, momentum 0.05", "[nn][norm][batchnorm]") {
  // seed-code §2.9 (MaskSyncBatchNorm): the biased variance over all R rows = sum_kept dev^2 / R, pads -> beta.
  manual_seed(10);
  const Tensor x = Tensor::randn({2, 3, 4}, 0.5, 2.0, DType::Float64), mask = padded_mask();
  auto bn = masked("batchnorm", 4, {{"released", true}});
  set_affine(*bn, {1, 2, 3, 4}, {0.5, -0.5, 1.5, -1.5});
  auto yv = vals(bn->forward(Variable(x), mask).data());
  // Hand computation.
  auto xv = vals(x), mv = vals(mask);
  const int R = 6, D = 4, n = 4;
  std::vector<double> ls(xv.size());
  for (int r = 0; r < R; ++r) {
    double ms = 0;
    for (int c = 0; c < D; ++c) ms += xv[r * D + c] * xv[r * D + c] / D;
    for (int c = 0; c < D; ++c) ls[r * D + c] = xv[r * D + c] / std::sqrt(ms + 1e-5);
  }
  const std::vector<double> w{1, 2, 3, 4}, b{0.5, -0.5, 1.5, -1.5};
  for (int c = 0; c < D; ++c) {
    double mu = 0, ss = 0;
    for (int r = 0; r < R; ++r) mu += mv[r] == 0 ? ls[r * D + c] / n : 0.0;
    for (int r = 0; r < R; ++r) ss += mv[r] == 0 ? (ls[r * D + c] - mu) * (ls[r * D + c] - mu) : 0.0;
    const double var = ss / R;
    for (int r = 0; r < R; ++r) {
      const double want = mv[r] == 0 ? w[c] * (ls[r * D + c] - mu) / std::sqrt(var + 1e-5) + b[c] : b[c];
      CHECK(yv[r * D + c] == Approx(want).margin(1e-12));
    }
    CHECK(vals(bn->buffer("running_mean"))[c] == Approx(0.05 * mu).margin(1e-14));
    CHECK(vals(bn->buffer("running_var"))[c] == Approx(0.95 + 0.05 * var * R / (R - 1)).margin(1e-14));
  }
}

TEST_CASE("batchnorm sync reading in eval: pad rows are the kept mean before the running statistics", "[nn][norm][batchnorm]") {
  // MaskSyncBatchNorm fills pad rows with the kept rows' mean in eval too, then F.batch_norm uses the running
  // statistics: a pad output is (mu_B - running_mean) / sqrt(running_var + eps) * gamma + beta, not beta.
  manual_seed(11);
  auto bn = masked("batchnorm", 4, {{"reading", "sync"}});
  for (int s = 0; s < 3; ++s) bn->forward(Variable(Tensor::randn({2, 3, 4}, 0.5, 2.0, DType::Float64)));
  set_affine(*bn, {1, 2, 3, 4}, {0.5, -0.5, 1.5, -1.5});
  bn->eval();
  const Tensor x = Tensor::randn({2, 3, 4}, 0.5, 2.0, DType::Float64), mask = padded_mask();
  auto yv = vals(bn->forward(Variable(x), mask).data());
  auto xv = vals(x), mv = vals(mask), rm = vals(bn->buffer("running_mean")), rv = vals(bn->buffer("running_var"));
  const int R = 6, D = 4, n = 4;
  std::vector<double> ls(xv.size());
  for (int r = 0; r < R; ++r) {
    double ms = 0;
    for (int c = 0; c < D; ++c) ms += xv[r * D + c] * xv[r * D + c] / D;
    for (int c = 0; c < D; ++c) ls[r * D + c] = xv[r * D + c] / std::sqrt(ms + 1e-5);
  }
  const std::vector<double> w{1, 2, 3, 4}, b{0.5, -0.5, 1.5, -1.5};
  for (int c = 0; c < D; ++c) {
    double mu = 0;
    for (int r = 0; r < R; ++r) mu += mv[r] == 0 ? ls[r * D + c] / n : 0.0;
    for (int r = 0; r < R; ++r) {
      const double h = mv[r] == 0 ? ls[r * D + c] : mu;
      CHECK(yv[r * D + c] == Approx(w[c] * (h - rm[c]) / std::sqrt(rv[c] + 1e-5) + b[c]).margin(1e-12));
    }
  }
}

TEST_CASE("batchnorm mask reading: eps clamps the variance, eval on batch statistics, gain in (0, 1)", "[nn][norm][batchnorm]") {
  // The released MaskBatchNorm: inv_std = max(biased var, eps)^-1/2 over the kept rows, in training and eval.
  manual_seed(13);
  auto bn = masked("batchnorm", 4, {{"reading", "mask"}});
  for (double g : vals(bn->named_parameters()[0].second.data())) CHECK((g >= 0 && g < 1));
  set_affine(*bn, {1, 2, 3, 4}, {0.5, -0.5, 1.5, -1.5});
  // Column 3 nearly constant over the kept rows: its variance falls under eps, so the clamp decides.
  std::vector<double> xs = {1, 2, 3, 5, -1, 0.5, 2, 5.001, 3, -2, 1, 4.999, 0.25, 1, 7, 5, 9, 9, 9, 9, -9, -9, -9, -9};
  const Tensor x = f64(xs, {2, 3, 4}), mask = padded_mask();
  for (bool train : {true, false}) {
    INFO("training " << train);
    bn->train(train);
    auto yv = vals(bn->forward(Variable(x), mask).data());
    auto mv = vals(mask);
    const std::vector<double> w{1, 2, 3, 4}, b{0.5, -0.5, 1.5, -1.5};
    for (int c = 0; c < 4; ++c) {
      double mu = 0, ss = 0;
      for (int r = 0; r < 6; ++r) mu += mv[r] == 0 ? xs[r * 4 + c] / 4 : 0.0;
      for (int r = 0; r < 6; ++r) ss += mv[r] == 0 ? (xs[r * 4 + c] - mu) * (xs[r * 4 + c] - mu) / 4 : 0.0;
      if (c == 3) CHECK(ss < 1e-5);
      for (int r = 0; r < 6; ++r)
        CHECK(yv[r * 4 + c] == Approx(w[c] * (xs[r * 4 + c] - mu) / std::sqrt(std::max(ss, 1e-5)) + b[c]).margin(1e-10));
    }
  }
  // Its gradient (with the clamp's zero below eps) is the exact one.
  bn->train(true);
  NL_GRADCHECK([&](const std::vector<Variable>& in) { return bn->forward(in[0], padded_mask()); }, {leaf({2, 3, 4}, 0.0, 1.0)});
  CHECK_THROWS_WITH(make_norm("batchnorm", 4, {{"reading", "exact"}}), Contains("'paper', 'sync'"));
  CHECK_THROWS_WITH(make_norm("batchnorm", 4, {{"released", true}, {"reading", "mask"}}), Contains("give one of them"));
}

TEST_CASE("batchnorm and powernorm-v: eval uses running statistics only", "[nn][norm][batchnorm]") {
  for (const char* name : {"batchnorm", "powernorm-v"}) {
    INFO(name);
    manual_seed(12);
    auto norm = masked(name, 4);
    for (int s = 0; s < 3; ++s) norm->forward(Variable(Tensor::randn({2, 3, 4}, 1.0, 2.0, DType::Float64)));
    norm->eval();
    const StateDict before = [&] {
      StateDict c;
      for (auto& [k, t] : norm->state_dict()) c[k] = t.clone();
      return c;
    }();
    // One sequence alone gives the same output as inside a batch (with padding), and nothing changes.
    const Tensor batch = Tensor::randn({2, 3, 4}, 0.0, 3.0, DType::Float64);
    Tensor in_batch = norm->forward(Variable(batch), padded_mask()).data();
    Tensor alone = norm->forward(Variable(batch.slice(0, 0, 1))).data();
    CHECK(max_abs_diff(in_batch.slice(0, 0, 1), alone) < 1e-15);
    for (auto& [k, t] : norm->state_dict()) CHECK(max_abs_diff(t.to(DType::Float64), before.at(k).to(DType::Float64)) == 0);
  }
}

TEST_CASE("powernorm-v: forward and exact gradient equal Shen et al. Eq. 4-6", "[nn][norm][powernorm]") {
  manual_seed(14);
  const int64_t B = 5, D = 3;
  Variable x = leaf({B, D}, 0.2, 1.3);
  const Tensor g = Tensor::randn({B, D}, 0.0, 1.0, DType::Float64);
  auto pnv = masked("pn-v", D, {{"alpha_fwd", 0.8}});  // the alias
  CHECK(pnv->type_name() == "PowerNormV");
  set_affine(*pnv, {1.5, 0.5, -1.0}, {0.0, 0.1, 0.2});
  Variable y = pnv->forward(x);
  y.backward(g);
  auto xv = vals(x.data()), gv = vals(g), yv = vals(y.data()), dx = vals(x.grad());
  const std::vector<double> gam{1.5, 0.5, -1.0}, bet{0.0, 0.1, 0.2};
  for (int64_t c = 0; c < D; ++c) {
    double psi2 = 0, lam = 0;
    for (int64_t i = 0; i < B; ++i) psi2 += xv[i * D + c] * xv[i * D + c] / B;
    const double psi = std::sqrt(psi2 + 1e-5);
    for (int64_t i = 0; i < B; ++i) lam += gam[c] * gv[i * D + c] * xv[i * D + c] / psi / B;
    for (int64_t i = 0; i < B; ++i) {
      const double xh = xv[i * D + c] / psi;
      CHECK(yv[i * D + c] == Approx(gam[c] * xh + bet[c]).margin(1e-13));  // Eq. 4-5
      CHECK(dx[i * D + c] == Approx((gam[c] * gv[i * D + c] - xh * lam) / psi).margin(1e-12));  // Eq. 6
    }
    CHECK(vals(pnv->buffer("running_phi"))[c] == Approx(0.8 + 0.2 * psi2).margin(1e-14));
  }
}

TEST_CASE("norm_forward passes the padding mask to batch-statistic norms and ignores it elsewhere", "[nn][norm][batchnorm]") {
  manual_seed(15);
  const Tensor x = Tensor::randn({2, 3, 4}, 0.0, 1.0, DType::Float64), mask = padded_mask();
  auto bn = make_norm("batchnorm", 4, {{"dtype", "float64"}});
  auto ln = make_norm("layernorm", 4, {{"dtype", "float64"}});
  CHECK(uses_batch_statistics(*bn));
  CHECK(uses_batch_statistics(*make_norm("powernorm", 4)));
  CHECK(!uses_batch_statistics(*ln));
  CHECK(!uses_batch_statistics(*make_norm("groupnorm", 4)));
  int calls = 0;
  bn->register_forward_hook([&](Module&, const std::vector<Variable>& in, const Variable&) {
    ++calls;
    CHECK(in.size() == 1);
  });
  Tensor via = norm_forward(*bn, Variable(x), mask).data();
  CHECK(calls == 1);
  Tensor direct = masked("batchnorm", 4)->forward(Variable(x), mask).data();
  CHECK(max_abs_diff(via, direct) == 0);
  CHECK(max_abs_diff(norm_forward(*ln, Variable(x), mask).data(), ln->forward(Variable(x)).data()) == 0);
}

TEST_CASE("batchnorm: state_dict holds the running buffers and restores them", "[nn][norm][batchnorm]") {
  manual_seed(16);
  auto a = masked("batchnorm", 4);
  a->forward(Variable(Tensor::randn({6, 4}, 2.0, 3.0, DType::Float64)));
  StateDict sd = a->state_dict();
  for (const char* k : {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}) CHECK(sd.count(k) == 1);
  auto b = masked("batchnorm", 4);
  b->load_state_dict(sd);
  a->eval();
  b->eval();
  const Tensor x = Tensor::randn({3, 4}, 0.0, 1.0, DType::Float64);
  CHECK(max_abs_diff(a->forward(Variable(x)).data(), b->forward(Variable(x)).data()) == 0);
  CHECK(b->buffer("num_batches_tracked").item() == 1);
}

TEST_CASE("batchnorm and powernorm-v: bad options and inputs give clear errors", "[nn][norm][batchnorm]") {
  CHECK_THROWS_WITH(make_norm("batchnorm", 4, {{"momentum", 1.5}}), Contains("momentum must be in [0, 1]"));
  CHECK_THROWS_WITH(make_norm("batchnorm", 4, {{"groups", 2}}), Contains("unknown option 'groups'"));
  CHECK_THROWS_WITH(make_norm("powernorm-v", 4, {{"alpha_fwd", -0.1}}), Contains("alpha_fwd must be in [0, 1]"));
  CHECK_THROWS_WITH(make_norm("powernorm-v", 6, {{"layer_scale", true}, {"layer_scale_groups", 4}}),
                    Contains("must be >= 1 and divide the feature dim 6"));
  CHECK_THROWS_WITH(make_norm("batchnorm", 4, {{"released", 1}}), Contains("'released' has the wrong type"));
  auto bn = masked("batchnorm", 4);
  const Tensor x = Tensor::randn({2, 3, 4}, 0.0, 1.0, DType::Float64);
  CHECK_THROWS_WITH(bn->forward(Variable(x), Tensor::zeros({3, 2})), Contains("padding mask [3, 2] must have shape [2, 3]"));
  CHECK_THROWS_WITH(bn->forward(Variable(x), Tensor::ones({2, 3})), Contains("pads every position"));
  CHECK_THROWS_WITH(bn->forward(Variable(Tensor::randn({2, 3, 5}))), Contains("must be [N, 4], [B, T, 4]"));
  CHECK_THROWS_WITH(bn->forward(Variable(Tensor::randn({1, 4}, 0, 1, DType::Float64))),
                    Contains("more than one non-padding row"));
  CHECK_THROWS_WITH(bn->forward(Variable(Tensor::randn({2, 4, 2, 2}, 0, 1, DType::Float64)), Tensor::zeros({2, 2, 2})),
                    Contains("take no padding mask"));
}
