// PowerNorm (PN, Shen et al. 2020 Algorithm 2; the released MaskPowerNorm/PowerFunction, seed-code
// §2.1-2.7): three consecutive float64 training steps against a hand computation of the code's forward,
// running updates (with the warmup double update), approximate backward and E update; the paper-reading
// options; the nu recursion of Eq. 13; when the approximate backward equals PN-V's exact gradient; eval;
// the layer scale; checkpoint round trip; errors.
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
constexpr double kEps = 1e-5;

std::shared_ptr<PowerNorm> pn(nlohmann::json o) {
  o["dtype"] = "float64";
  auto m = std::dynamic_pointer_cast<PowerNorm>(make_norm("powernorm", 2, o));
  REQUIRE(m);
  assign(m->param("weight"), Tensor::from_vector<double>({1.5, -0.8}, {2}));
  assign(m->param("bias"), Tensor::from_vector<double>({0.2, -0.1}, {2}));
  return m;
}

// The released code's PowerFunction by hand, on rows [R, 2] with a keep flag per row.
struct HandPN {
  bool double_update = true, bwd_batch = true;
  int64_t warmup = 2;
  double af = 0.9, ab = 0.7;
  std::vector<double> gamma{1.5, -0.8}, beta{0.2, -0.1};
  std::vector<double> phi{1.0, 1.0}, E{0.0, 0.0};
  int64_t it = 0;
  // Outputs of the last step.
  std::vector<double> y, dx, dgamma, dbeta;

  void step(const std::vector<double>& x, const std::vector<double>& keep, const std::vector<double>& gy) {
    const size_t R = keep.size();
    ++it;
    y.assign(x.size(), 0);
    dx.assign(x.size(), 0);
    dgamma.assign(2, 0);
    dbeta.assign(2, 0);
    for (int c = 0; c < 2; ++c) {
      double n = 0, psi2 = 0;
      for (size_t r = 0; r < R; ++r) {
        n += keep[r];
        psi2 += keep[r] * x[r * 2 + c] * x[r * 2 + c];
      }
      psi2 /= n;
      const double sf = std::sqrt((it <= warmup ? psi2 : phi[c]) + kEps);
      const double sb = bwd_batch ? std::sqrt(psi2 + kEps) : sf;
      if (it < warmup) phi[c] = phi[c] * (double)(it - 1) / (double)it + psi2 / (double)it;
      if (it >= warmup || double_update) phi[c] = af * phi[c] + (1 - af) * psi2;
      double mean_gtz = 0;
      std::vector<double> z(R), gt(R);
      for (size_t r = 0; r < R; ++r) {
        z[r] = x[r * 2 + c] / sf;
        y[r * 2 + c] = gamma[c] * z[r] + beta[c];
        gt[r] = gamma[c] * gy[r * 2 + c] - (1 - ab) * E[c] * z[r];
        mean_gtz += gt[r] * z[r] / (double)R;  // over every row, pads included
        dx[r * 2 + c] = gt[r] / sb;
        dgamma[c] += gy[r * 2 + c] * z[r];
        dbeta[c] += gy[r * 2 + c];
      }
      E[c] += mean_gtz;
    }
  }
};

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(tol));
}

// `steps` training steps of module and hand computation side by side; the second sequence has a pad at
// step 2.
void run_steps(int steps, const nlohmann::json& opts, HandPN hand) {
  auto m = pn(opts);
  manual_seed(21);
  for (int step = 1; step <= steps; ++step) {
    INFO("step " << step);
    const Tensor x = Tensor::randn({2, 3, 2}, 0.4, 1.5, DType::Float64);
    const Tensor g = Tensor::randn({2, 3, 2}, 0.0, 1.0, DType::Float64);
    const std::vector<double> padv = step == 2 ? std::vector<double>{0, 0, 0, 0, 0, 1} : std::vector<double>(6, 0.0);
    const Tensor mask = Tensor::from_vector<double>(padv, {2, 3});
    std::vector<double> keep(6);
    for (int r = 0; r < 6; ++r) keep[r] = 1 - padv[r];
    hand.step(vals(x), keep, vals(g));
    for (auto& p : m->parameters()) p.zero_grad();
    Variable xv(x.clone(), true);
    Variable y = m->forward(xv, mask);
    y.backward(g);
    check_close(vals(y.data()), hand.y, 1e-10);
    check_close(vals(xv.grad()), hand.dx, 1e-10);
    check_close(vals(m->param("weight").grad()), hand.dgamma, 1e-10);
    check_close(vals(m->param("bias").grad()), hand.dbeta, 1e-10);
    check_close(vals(m->buffer("running_phi")), hand.phi, 1e-12);
    check_close(vals(m->buffer("ema_gz")), hand.E, 1e-12);
    CHECK(m->buffer("iters").item() == step);
  }
}
}  // namespace

TEST_CASE("powernorm: four training steps equal the released PowerFunction by hand (float64, 1e-10)",
          "[nn][norm][powernorm]") {
  // warmup_iters 3: steps 1-2 batch psi, cumulative mean then EMA (the double update; at step 1 the
  // cumulative mean makes running_phi = psi_B, so step 2 is where the double update shows); step 3 batch
  // psi, EMA only (it < warmup is false); step 4 running psi_{t-1}; dx / batch psi_B throughout.
  HandPN hand;
  hand.warmup = 3;
  run_steps(4, {{"warmup_iters", 3}, {"alpha_bwd", 0.7}, {"layer_scale", false}}, hand);
}

TEST_CASE("powernorm: the paper reading (dx / psi_{t-1}, single warmup update) by hand", "[nn][norm][powernorm]") {
  // Steps 1-2: cumulative mean only; step 3: EMA only; step 4: forward and backward divide by psi_{t-1}.
  HandPN hand;
  hand.double_update = false;
  hand.bwd_batch = false;
  hand.warmup = 3;
  run_steps(4, {{"warmup_iters", 3},
                   {"alpha_bwd", 0.7},
                   {"layer_scale", false},
                   {"bwd_scale", "running"},
                   {"warmup_double_update", false}},
                  hand);
}

TEST_CASE("powernorm: the warmup double update changes running_phi as the code does", "[nn][norm][powernorm]") {
  manual_seed(22);
  const Tensor x1 = Tensor::randn({4, 2}, 0.0, 2.0, DType::Float64), x2 = Tensor::randn({4, 2}, 1.0, 1.0, DType::Float64);
  auto code = pn({{"warmup_iters", 3}, {"layer_scale", false}});
  auto paper = pn({{"warmup_iters", 3}, {"layer_scale", false}, {"warmup_double_update", false}});
  for (auto* m : {&code, &paper})
    for (const Tensor* x : {&x1, &x2}) (*m)->forward(Variable(*x));
  // Step 2 of warmup: code = EMA of the cumulative mean, the single reading = the cumulative mean.
  auto a = vals(x1), b = vals(x2);
  for (int c = 0; c < 2; ++c) {
    double p1 = 0, p2 = 0;
    for (int r = 0; r < 4; ++r) {
      p1 += a[r * 2 + c] * a[r * 2 + c] / 4;
      p2 += b[r * 2 + c] * b[r * 2 + c] / 4;
    }
    CHECK(vals(paper->buffer("running_phi"))[c] == Approx((p1 + p2) / 2).margin(1e-12));
    CHECK(vals(code->buffer("running_phi"))[c] == Approx(0.9 * (p1 + p2) / 2 + 0.1 * p2).margin(1e-12));
  }
}

TEST_CASE("powernorm: E follows the nu recursion of Algorithm 2 (Eq. 13)", "[nn][norm][powernorm]") {
  // nu = (1 - alpha_bwd) E must satisfy nu_t = nu_{t-1} (1 - (1 - a) Gamma) + (1 - a) Lambda with
  // Gamma = mean(z^2), Lambda = mean(dL/dz ⊙ z) over the batch (seed-code §2.3).
  const double a = 0.8;
  auto m = pn({{"alpha_bwd", a}, {"layer_scale", false}, {"warmup_iters", 1}});
  manual_seed(23);
  for (int step = 0; step < 4; ++step) {
    const Tensor x = Tensor::randn({6, 2}, 0.0, 2.0, DType::Float64), g = Tensor::randn({6, 2}, 0.5, 1.0, DType::Float64);
    const auto E0 = vals(m->buffer("ema_gz").clone());
    Variable y = m->forward(Variable(x, true));
    const auto z = vals(div(sub(y.data(), m->param("bias").data()), m->param("weight").data()));
    y.backward(g);
    const auto E1 = vals(m->buffer("ema_gz")), gv = vals(g), gam = vals(m->param("weight").data());
    for (int c = 0; c < 2; ++c) {
      double Gamma = 0, Lambda = 0;
      for (int r = 0; r < 6; ++r) {
        Gamma += z[r * 2 + c] * z[r * 2 + c] / 6;
        Lambda += gam[c] * gv[r * 2 + c] * z[r * 2 + c] / 6;
      }
      const double nu0 = (1 - a) * E0[c], nu1 = (1 - a) * E1[c];
      CHECK(nu1 == Approx(nu0 * (1 - (1 - a) * Gamma) + (1 - a) * Lambda).margin(1e-12));
    }
  }
}

TEST_CASE("powernorm: with nu equal to this batch's Lambda, the backward is PN-V's exact gradient",
          "[nn][norm][powernorm]") {
  // Eq. 11 vs Eq. 6: during warmup (forward on psi_B) g~ = g - nu z, dx = g~/psi_B; PN-V's exact gradient
  // is (g - Lambda z)/psi_B. So PN's approximation is exact exactly when nu_{t-1} equals the current
  // Lambda = mean(g ⊙ z). The paper claims no alpha that makes it exact in general (nu lags one step).
  manual_seed(25);
  const Tensor x = Tensor::randn({5, 2}, 0.3, 1.2, DType::Float64), g = Tensor::randn({5, 2}, 0.0, 1.0, DType::Float64);
  // PN-V's exact gradient (checked against Eq. 6 in test_batch_norms.cpp).
  auto pnv = make_norm("powernorm-v", 2, {{"dtype", "float64"}});
  Variable xa(x.clone(), true);
  pnv->forward(xa).backward(g);
  // Lambda of this batch, per feature (gain 1).
  auto xv = vals(x), gv = vals(g);
  std::vector<double> lam(2, 0);
  for (int c = 0; c < 2; ++c) {
    double psi2 = 0;
    for (int r = 0; r < 5; ++r) psi2 += xv[r * 2 + c] * xv[r * 2 + c] / 5;
    for (int r = 0; r < 5; ++r) lam[c] += gv[r * 2 + c] * xv[r * 2 + c] / std::sqrt(psi2 + kEps) / 5;
  }
  const double a = 0.6;
  auto m = std::dynamic_pointer_cast<PowerNorm>(
      make_norm("powernorm", 2, {{"dtype", "float64"}, {"alpha_bwd", a}, {"layer_scale", false}, {"warmup_iters", 10}}));
  m->buffer("ema_gz").copy_(Tensor::from_vector<double>({lam[0] / (1 - a), lam[1] / (1 - a)}, {2}));
  Variable xb(x.clone(), true);
  m->forward(xb).backward(g);
  CHECK(max_abs_diff(xa.grad(), xb.grad()) < 1e-12);
  // With E = 0 instead (a fresh module) it is not the exact gradient.
  auto fresh = make_norm("powernorm", 2, {{"dtype", "float64"}, {"layer_scale", false}});
  Variable xc(x.clone(), true);
  fresh->forward(xc).backward(g);
  CHECK(max_abs_diff(xa.grad(), xc.grad()) > 1e-3);
}

TEST_CASE("powernorm: eval divides by the running psi only, after the layer scale", "[nn][norm][powernorm]") {
  auto m = pn({{"layer_scale", true}, {"warmup_iters", 1}});
  manual_seed(27);
  for (int s = 0; s < 3; ++s) m->forward(Variable(Tensor::randn({4, 2}, 0.0, 2.0, DType::Float64), true)).backward(
      Tensor::randn({4, 2}, 0.0, 1.0, DType::Float64));
  m->eval();
  const Tensor x = Tensor::randn({2, 3, 2}, 0.0, 2.0, DType::Float64);
  const auto phi = vals(m->buffer("running_phi"));
  const auto y = vals(m->forward(Variable(x), Tensor::from_vector<double>({0, 0, 1, 0, 1, 1}, {2, 3})).data());
  auto xv = vals(x);
  const std::vector<double> gam{1.5, -0.8}, bet{0.2, -0.1};
  for (int r = 0; r < 6; ++r) {
    const double rms = std::sqrt((xv[r * 2] * xv[r * 2] + xv[r * 2 + 1] * xv[r * 2 + 1]) / 2 + 1e-5);
    for (int c = 0; c < 2; ++c)
      CHECK(y[r * 2 + c] == Approx(gam[c] * (xv[r * 2 + c] / rms) / std::sqrt(phi[c] + kEps) + bet[c]).margin(1e-12));
  }
  CHECK(m->buffer("iters").item() == 3);  // eval forwards are not counted
}

TEST_CASE("powernorm: layer scale equals PN without it on GroupScaling1D's output", "[nn][norm][powernorm]") {
  manual_seed(29);
  const Tensor x = Tensor::randn({3, 2, 4}, 0.0, 2.0, DType::Float64), g = Tensor::randn({3, 2, 4}, 0.0, 1.0, DType::Float64);
  auto with = make_norm("powernorm", 4, {{"dtype", "float64"}, {"layer_scale_groups", 2}});
  auto without = make_norm("powernorm", 4, {{"dtype", "float64"}, {"layer_scale", false}});
  Variable xa(x.clone(), true);
  Variable ya = with->forward(xa);
  Variable xs(x.clone(), true);
  Variable scaled = reshape(group_scale(reshape(xs, {6, 4}), 2), {3, 2, 4});
  Variable yb = without->forward(scaled);
  CHECK(max_abs_diff(ya.data(), yb.data()) < 1e-14);
  ya.backward(g);
  yb.backward(g);
  CHECK(max_abs_diff(xa.grad(), xs.grad()) < 1e-13);
}

TEST_CASE("powernorm: a checkpoint round trip continues bit-identically", "[nn][norm][powernorm]") {
  auto run_step = [](Module& m, int seed) {
    manual_seed(seed);
    Variable x(Tensor::randn({5, 2}, 0.0, 2.0, DType::Float64), true);
    Variable y = m.forward(x);
    y.backward(Tensor::randn({5, 2}, 0.0, 1.0, DType::Float64));
    return y.data().clone();
  };
  auto a = pn({{"warmup_iters", 2}, {"layer_scale", false}});
  for (int s = 0; s < 3; ++s) run_step(*a, 40 + s);
  const StateDict sd = a->state_dict();
  for (const char* k : {"running_phi", "ema_gz", "iters", "weight", "bias"}) CHECK(sd.count(k) == 1);
  auto b = pn({{"warmup_iters", 2}, {"layer_scale", false}});
  b->load_state_dict(sd);
  CHECK(b->buffer("iters").item() == 3);
  CHECK(max_abs_diff(run_step(*a, 50), run_step(*b, 50)) == 0);
  CHECK(max_abs_diff(a->buffer("ema_gz"), b->buffer("ema_gz")) == 0);
  CHECK(max_abs_diff(a->buffer("running_phi"), b->buffer("running_phi")) == 0);
}

TEST_CASE("powernorm: two forwards before one backward are refused (E would be stale)", "[nn][norm][powernorm]") {
  auto m = pn({{"layer_scale", false}});
  Variable x(Tensor::randn({4, 2}, 0.0, 1.0, DType::Float64), true);
  Variable loss = add(sum(m->forward(x)), sum(m->forward(x)));
  CHECK_THROWS_WITH(loss.backward(), Contains("E buffer"));
}

TEST_CASE("powernorm: bad options give clear errors", "[nn][norm][powernorm]") {
  CHECK_THROWS_WITH(make_norm("powernorm", 4, {{"alpha_bwd", 2.0}}), Contains("alpha_bwd must be in [0, 1]"));
  CHECK_THROWS_WITH(make_norm("powernorm", 4, {{"warmup_iters", -1}}), Contains("warmup_iters must be >= 0"));
  CHECK_THROWS_WITH(make_norm("powernorm", 4, {{"warmup_iters", 1.5}}), Contains("'warmup_iters' has the wrong type"));
  CHECK_THROWS_WITH(make_norm("powernorm", 4, {{"bwd_scale", "psi"}}), Contains("'batch'") && Contains("'running'"));
  CHECK_THROWS_WITH(make_norm("powernorm", 6, {{"layer_scale_groups", 4}}), Contains("divide the feature dim 6"));
  CHECK_THROWS_WITH(make_norm("powernorm", 4, {{"momentum", 0.1}}), Contains("unknown option 'momentum'"));
}
