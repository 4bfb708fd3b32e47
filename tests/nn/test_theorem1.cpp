// Theorem 1 of Xu et al. 2019 checked numerically with the paper's definitions (biased sigma, eps = 0):
// for y = (x - mu)/sigma and upstream g = dL/dy, with gbar = mean(g) and D_g = (1/H) sum (g_i - gbar)^2,
// the gradient b = dL/dx of each variant satisfies (appendix B):
//   LayerNorm-simple (W1): mean 0,          var <= D_g/sigma^2   (exactly (D_g - (y.g/H)^2)/sigma^2)
//   DetachNorm (I/sigma):  mean gbar/sigma, var  = D_g/sigma^2
//   detach-mean (W2):      mean gbar/sigma, var <= D_g/sigma^2   (centred b = W1 g, Eq. 17-18)
//   detach-variance (W3):  mean 0,          var  = D_g/sigma^2
// The paper's detach-mean keeps the std's gradient (Eq. 14 uses d sigma/dx = y/H), which is what the
// released code does too: torch.std centres internally (seed-code §1.2). So paper and code agree on
// which terms survive; they differ only in the estimator (unbiased, eps on the std), under which the
// same statements hold with D = s + eps in place of sigma, except that LayerNorm-simple's bound is
// then not tight (its std term is scaled by s/D < 1): tested below as "code estimator".
#include "nn_test_util.h"
#include "nn/norm/theory.h"

using namespace nl;
using namespace nltest;

namespace {
// Mean and biased variance of a row (gbar and D_g of appendix B): the closed forms live in theory.h.
nl::theory::Moments stats(const double* v, int64_t H) { return nl::theory::moments(v, H); }

// dL/dx of norm `name` at x for upstream g.
Tensor grad_of(const std::shared_ptr<Module>& norm, const Tensor& x, const Tensor& g) {
  Variable xv(x.clone(), true);
  norm->forward(xv).backward(g);
  return xv.grad().contiguous();
}
}  // namespace

TEST_CASE("Theorem 1: gradient mean and variance of each variant (paper definitions)", "[nn][norm][theorem1]") {
  manual_seed(21);
  for (int64_t H : {2, 3, 8, 64, 257}) {
    const int64_t R = 6;
    Tensor x = nl::add(nl::mul(Tensor::randn({R, H}, 0, 1, DType::Float64), Tensor::rand({R, 1}, 0.1, 4.0, DType::Float64)),
                       Tensor::randn({R, 1}, 0, 3, DType::Float64));
    Tensor g = nl::add(Tensor::randn({R, H}, 0, 1, DType::Float64), Tensor::randn({R, 1}, 0.5, 1, DType::Float64));
    for (const char* impl : {"composite", "fused"}) {
      const nlohmann::json o{{"impl", impl}, {"eps", 0.0}};
      Tensor b1 = grad_of(make_norm("layernorm-simple", H, o), x, g);
      Tensor bd = grad_of(make_norm("detachnorm", H, o), x, g);
      Tensor b2 = grad_of(make_norm("detach-mean", H, o), x, g);
      Tensor b3 = grad_of(make_norm("detach-variance", H, o), x, g);
      const double *xp = x.data<double>(), *gp = g.data<double>();
      for (int64_t r = 0; r < R; ++r) {
        INFO("H " << H << ", row " << r << ", " << impl);
        auto xs = stats(xp + r * H, H);
        auto gs = stats(gp + r * H, H);
        const double sigma = std::sqrt(xs.var);
        const double Da = gs.var / (sigma * sigma), tol = 1e-10 * (1 + Da + std::abs(gs.mean / sigma));
        auto s1 = stats(b1.data<double>() + r * H, H);
        auto sd = stats(bd.data<double>() + r * H, H);
        auto s2 = stats(b2.data<double>() + r * H, H);
        auto s3 = stats(b3.data<double>() + r * H, H);
        // (1) LayerNorm-simple: mean 0, variance <= D_g/sigma^2 (and equal to the exact projection value)
        CHECK(std::abs(s1.mean) < tol);
        CHECK(s1.var <= Da + tol);
        const std::vector<double> xr(xp + r * H, xp + (r + 1) * H), gr(gp + r * H, gp + (r + 1) * H);
        CHECK(s1.var == Approx(nl::theory::ln_simple_exact_var(xr, gr)).epsilon(1e-9).margin(tol));
        // DetachNorm: mean gbar/sigma, variance D_g/sigma^2
        CHECK(sd.mean == Approx(gs.mean / sigma).epsilon(1e-10).margin(tol));
        CHECK(sd.var == Approx(Da).epsilon(1e-10).margin(tol));
        // (2) detach-mean: mean gbar/sigma, variance <= D_g/sigma^2 (equal to LayerNorm-simple's)
        CHECK(s2.mean == Approx(gs.mean / sigma).epsilon(1e-10).margin(tol));
        CHECK(s2.var <= Da + tol);
        CHECK(s2.var == Approx(s1.var).epsilon(1e-9).margin(tol));
        // (3) detach-variance: mean 0, variance = D_g/sigma^2
        CHECK(std::abs(s3.mean) < tol);
        CHECK(s3.var == Approx(Da).epsilon(1e-10).margin(tol));
        // The inequalities are informative: strict for a generic g when H > 2 (for H = 2, y = ±1 and
        // (y.g/H)^2 = D_g, so LayerNorm-simple's gradient vanishes).
        if (H > 2) CHECK(s1.var < Da * (1 - 1e-6));
        if (H == 2) CHECK(std::abs(s1.var) < tol);
      }
    }
  }
}

TEST_CASE("Theorem 1 with the released code's estimator (unbiased std, eps on the std)", "[nn][norm][theorem1]") {
  // With D = s + eps: DetachNorm b = g/D, detach-variance b = (g - gbar)/D, LN-simple b = (1/D)[(g - gbar)
  // - alpha (u.(g - gbar)) u] with u = d/|d| and alpha = s/D in (0, 1] (seed-code §1.2, our algebra).
  manual_seed(22);
  const int64_t H = 24, R = 5;
  const double eps = 1e-2;  // large enough for s/D to be visibly < 1
  Tensor x = nl::mul(Tensor::randn({R, H}, 0, 1, DType::Float64), Tensor::rand({R, 1}, 0.05, 0.5, DType::Float64));
  Tensor g = nl::affine(Tensor::randn({R, H}, 0, 1, DType::Float64), 1.0, 0.4);
  for (const char* impl : {"composite", "fused"}) {
    const nlohmann::json o{{"impl", impl}, {"eps", eps}, {"unbiased", true}, {"eps_inside", false}};
    Tensor b1 = grad_of(make_norm("layernorm-simple", H, o), x, g);
    Tensor bd = grad_of(make_norm("detachnorm", H, o), x, g);
    Tensor b2 = grad_of(make_norm("detach-mean", H, o), x, g);
    Tensor b3 = grad_of(make_norm("detach-variance", H, o), x, g);
    const double *xp = x.data<double>(), *gp = g.data<double>();
    for (int64_t r = 0; r < R; ++r) {
      INFO(impl << " row " << r);
      auto xs = stats(xp + r * H, H);
      auto gs = stats(gp + r * H, H);
      const double s = std::sqrt(xs.var * H / (H - 1)), D = s + eps, Da = gs.var / (D * D);
      double S = 0;
      for (int64_t i = 0; i < H; ++i) S += gp[r * H + i] * (xp[r * H + i] - xs.mean);
      // Closed forms of seed-code §1.2, element by element.
      for (int64_t j = 0; j < H; ++j) {
        const double d = xp[r * H + j] - xs.mean, gj = gp[r * H + j];
        CHECK(b1.data<double>()[r * H + j] == Approx((gj - gs.mean) / D - S * d / (D * D * (H - 1) * s)).epsilon(1e-10));
        CHECK(b2.data<double>()[r * H + j] == Approx(gj / D - S * d / (D * D * (H - 1) * s)).epsilon(1e-10));
        CHECK(b3.data<double>()[r * H + j] == Approx((gj - gs.mean) / D).epsilon(1e-10));
        CHECK(bd.data<double>()[r * H + j] == Approx(gj / D).epsilon(1e-12));
      }
      auto s1 = stats(b1.data<double>() + r * H, H);
      auto s2 = stats(b2.data<double>() + r * H, H);
      CHECK(std::abs(s1.mean) < 1e-10);
      CHECK(s1.var < Da);
      CHECK(s2.mean == Approx(gs.mean / D).epsilon(1e-10));
      CHECK(s2.var < Da);
    }
  }
}

TEST_CASE("Theorem 1: autograd Jacobians equal W1, W2, W3 and I/sigma", "[nn][norm][theorem1]") {
  manual_seed(23);
  for (int64_t H : {3, 10, 33}) {
    Tensor x = nl::affine(Tensor::randn({1, H}, 0, 1, DType::Float64), 2.5, 1.0);
    const auto xv = vals(x);
    for (const char* impl : {"composite", "fused"})
      for (std::string v : {"layernorm-simple", "detach-mean", "detach-variance", "detachnorm"}) {
        INFO(v << " " << impl << " H " << H);
        auto norm = make_norm(v, H, {{"impl", impl}, {"eps", 0.0}});
        const nl::theory::Matrix W = nl::theory::paper_jacobian(v, xv);  // appendix B, Eq. 8, 14, 19, 5
        double worst = 0;
        for (int64_t i = 0; i < H; ++i) {  // row i of dL/dx for g = e_i (the W_k are symmetric)
          Tensor e = Tensor::zeros({1, H}, DType::Float64);
          e.data<double>()[i] = 1.0;
          auto row = vals(grad_of(norm, x, e));
          for (int64_t j = 0; j < H; ++j) worst = std::max(worst, std::abs(row[j] - W.at(i, j)));
        }
        CHECK(worst < 1e-10);
      }
  }
}

TEST_CASE("AdaNorm: gradient is LayerNorm-simple's applied to C(1 - k y) ⊙ g (Eq. 9, factor detached)", "[nn][norm][adanorm]") {
  manual_seed(24);
  const int64_t H = 12, R = 4;
  Tensor x = nl::affine(Tensor::randn({R, H}, 0, 1, DType::Float64), 1.7, -0.4);
  Tensor g = Tensor::randn({R, H}, 0.2, 1, DType::Float64);
  for (const char* impl : {"composite", "fused"})
    for (const nlohmann::json& est : {nlohmann::json{{"eps", 0.0}},
                                      nlohmann::json{{"eps", 1e-5}, {"unbiased", true}, {"eps_inside", false}}}) {
      std::vector<Tensor> forwards;
      for (double k : {0.1, 0.3}) {
        const double C = 2.0;
        INFO(impl << " " << est.dump() << " k " << k);
        nlohmann::json o = est;
        o["impl"] = impl;
        auto simple = make_norm("layernorm-simple", H, o);
        o["C"] = C;
        o["k"] = k;
        auto ada = make_norm("adanorm", H, o);
        Tensor y = simple->forward(Variable(x)).data();
        // forward: z = C (1 - k y) ⊙ y
        Tensor z = ada->forward(Variable(x)).data();
        Tensor phi = nl::affine(y, -C * k, C);
        CHECK(max_abs_diff(z, nl::mul(phi, y)) < 1e-12);
        forwards.push_back(z);
        // backward: dL/dx = LN-simple backward of phi ⊙ g
        Tensor ga = grad_of(ada, x, g);
        Tensor want = grad_of(simple, x, nl::mul(phi, g));
        CHECK(max_abs_diff(ga, want) < 1e-10);
        // ... which is not the full derivative (the factor's own gradient is cut): compare with
        // differentiating z = C y - C k y^2 completely.
        Variable xv(x.clone(), true);
        Variable yv = simple->forward(xv);
        Variable full = mul(yv, affine(yv, -C * k, C));
        full.backward(g);
        CHECK(max_abs_diff(ga, xv.grad()) > 1e-3);
      }
      CHECK(max_abs_diff(forwards[0], forwards[1]) > 1e-3);  // k changes the forward
    }
}
