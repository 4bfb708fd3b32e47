// Adam, AdamW and SGD against hand-written formulas (Kingma & Ba 2015 Alg. 1; Loshchilov & Hutter
// 2019 Alg. 2; torch.optim.SGD) and against numbers printed by torch.optim 1.13 for the same inputs.
#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/functions.h"
#include "autograd/tape.h"
#include "optim/optimizer.h"
#include "tensor/ops.h"

using namespace nl;
using Catch::Matchers::Contains;

namespace {
const std::vector<double> kP0 = {1.0, -2.0, 0.5};
const std::vector<std::vector<double>> kGrads = {{0.5, -1.0, 0.25}, {-0.25, 0.5, 2.0}, {0.1, 0.1, -0.3}};

Variable param(DType dt = DType::Float64) {
  return Variable(Tensor::from_vector<double>(kP0, {3}).to(dt), true, "w");
}

// Runs `opt` for the three gradient steps and returns the parameter after each.
std::vector<std::vector<double>> run(Optimizer& opt, Variable p) {
  std::vector<std::vector<double>> out;
  for (const auto& g : kGrads) {
    p.set_grad(Tensor::from_vector<double>(g, {3}).to(p.dtype()));
    opt.step();
    out.push_back(p.data().to_vector<double>());
  }
  return out;
}

// Adam/AdamW written out from the papers (what torch.optim implements).
std::vector<std::vector<double>> adam_reference(double lr, double wd, bool decoupled) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  std::vector<double> p = kP0, m(3, 0.0), v(3, 0.0);
  std::vector<std::vector<double>> out;
  for (int t = 1; t <= 3; ++t) {
    for (int i = 0; i < 3; ++i) {
      double g = kGrads[t - 1][i];
      if (decoupled) p[i] *= 1 - lr * wd;  // AdamW: decay the weights
      else g += wd * p[i];                 // Adam: L2 term in the gradient
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      const double mhat = m[i] / (1 - std::pow(b1, t)), vhat = v[i] / (1 - std::pow(b2, t));
      p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
    out.push_back(p);
  }
  return out;
}

std::vector<std::vector<double>> sgd_reference(double lr, double mom, double damp, double wd, bool nesterov) {
  std::vector<double> p = kP0, buf(3, 0.0);
  std::vector<std::vector<double>> out;
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < 3; ++i) {
      double d = kGrads[t][i] + wd * p[i];
      if (mom != 0) {
        buf[i] = t == 0 ? d : mom * buf[i] + (1 - damp) * d;
        d = nesterov ? d + mom * buf[i] : buf[i];
      }
      p[i] -= lr * d;
    }
    out.push_back(p);
  }
  return out;
}

void check_close(const std::vector<std::vector<double>>& got, const std::vector<std::vector<double>>& want,
                 double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t s = 0; s < got.size(); ++s)
    for (size_t i = 0; i < got[s].size(); ++i) {
      INFO("step " << s + 1 << " element " << i);
      CHECK(got[s][i] == Approx(want[s][i]).margin(tol).epsilon(0));
    }
}
}  // namespace

TEST_CASE("optim: Adam matches Algorithm 1 and torch.optim.Adam", "[optim]") {
  // First step by hand: m̂ = g, v̂ = g², so p1 = p0 − lr·g/(|g| + eps) = p0 − 0.1·sign(g).
  const std::vector<std::vector<double>> torch_vals = {
      {0.900000002, -1.900000001, 0.4000000039999998},
      {0.8733662987078463, -1.873366297370903, 0.31785342874289435},
      {0.8418419430257161, -1.8585564644610497, 0.264455764221344}};
  Variable p = param();
  Adam opt({p}, AdamOptions{.lr = 0.1});
  auto got = run(opt, p);
  CHECK(got[0][0] == Approx(1.0 - 0.1 * 0.5 / (0.5 + 1e-8)).epsilon(1e-14));
  check_close(got, adam_reference(0.1, 0.0, false), 1e-12);
  check_close(got, torch_vals, 1e-12);
  // float32 follows the same formulas to float precision.
  Variable p32 = param(DType::Float32);
  Adam opt32({p32}, AdamOptions{.lr = 0.1});
  check_close(run(opt32, p32), torch_vals, 2e-6);
}

TEST_CASE("optim: Adam with L2 weight decay and AdamW with decoupled decay", "[optim]") {
  Variable p = param();
  Adam adam({p}, AdamOptions{.lr = 0.1, .weight_decay = 0.1});
  auto got = run(adam, p);
  check_close(got, adam_reference(0.1, 0.1, false), 1e-12);
  check_close(got, {{0.9000000016666666, -1.9000000008333333, 0.4000000033333332},
                    {0.8544413674617625, -1.8537472646427609, 0.31663319585654404},
                    {0.8024037944234685, -1.813684204527366, 0.26097783211977493}},
              1e-12);
  CHECK(adam.type_name() == "adam");

  Variable q = param();
  AdamW adamw({q}, AdamOptions{.lr = 0.1, .weight_decay = 0.1});
  auto gotw = run(adamw, q);
  // Step 1 by hand: p·(1 − lr·wd) − lr·sign(g) = 1·0.99 − 0.1 = 0.89.
  CHECK(gotw[0][0] == Approx(0.89).epsilon(1e-7));
  check_close(gotw, adam_reference(0.1, 0.1, true), 1e-12);
  check_close(gotw, {{0.890000002, -1.880000001, 0.3950000039999998},
                     {0.8544662986878463, -1.8345662973609032, 0.30890342870289433},
                     {0.8143972800188376, -1.8014108014774408, 0.25241672989431496}},
              1e-12);
  CHECK(adamw.type_name() == "adamw");
}

TEST_CASE("optim: SGD plain, momentum + weight decay, Nesterov, dampening", "[optim]") {
  {
    Variable p = param();
    SGD opt({p}, SGDOptions{.lr = 0.1});
    auto got = run(opt, p);
    // By hand: 1 − 0.1·0.5 = 0.95; 0.95 + 0.1·0.25 = 0.975; 0.975 − 0.1·0.1 = 0.965.
    check_close(got, {{0.95, -1.9, 0.475}, {0.975, -1.95, 0.275}, {0.965, -1.96, 0.305}}, 1e-14);
  }
  {
    Variable p = param();
    SGD opt({p}, SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01});
    auto got = run(opt, p);
    check_close(got, sgd_reference(0.1, 0.9, 0, 0.01, false), 1e-14);
    check_close(got, {{0.949, -1.898, 0.4745},
                      {0.927151, -1.854302, 0.25107549999999995},
                      {0.8965597489999999, -1.8231194979999998, 0.07974237449999995}},
                1e-14);
  }
  {
    Variable p = param();
    SGD opt({p}, SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
    auto got = run(opt, p);
    check_close(got, sgd_reference(0.1, 0.9, 0, 0.01, true), 1e-14);
    check_close(got, {{0.9031, -1.8062, 0.45155},
                      {0.90757411, -1.81514822, 0.050037055},
                      {0.869189208191, -1.795378416382, -0.07401327090450004}},
                1e-14);
  }
  {
    Variable p = param();
    SGD opt({p}, SGDOptions{.lr = 0.1, .momentum = 0.9, .dampening = 0.5});
    auto got = run(opt, p);
    check_close(got, sgd_reference(0.1, 0.9, 0.5, 0, false), 1e-14);
    check_close(got, {{0.95, -1.9, 0.475}, {0.9175, -1.835, 0.3525}, {0.88325, -1.7815, 0.25725}}, 1e-14);
  }
  CHECK_THROWS_WITH(SGD({param()}, SGDOptions{.nesterov = true}), Contains("nesterov"));
  CHECK_THROWS_WITH(SGD({param()}, SGDOptions{.momentum = 0.9, .dampening = 0.1, .nesterov = true}),
                    Contains("zero dampening"));
}

TEST_CASE("optim: step skips parameters without grad, zero_grad drops grads, version bump", "[optim]") {
  Variable a = param(), b = param();
  Adam opt({a, b}, AdamOptions{.lr = 0.1});
  a.set_grad(Tensor::from_vector<double>(kGrads[0], {3}));
  const uint64_t v0 = a.data().version();
  opt.step();
  CHECK(a.data().version() > v0);  // in-place update is visible to saved-tensor checks
  CHECK(b.data().to_vector<double>() == kP0);
  TensorMap t;
  auto st = opt.save_state(t);
  CHECK(st["groups"][0]["state"][0]["step"] == 1);
  CHECK(st["groups"][0]["state"][1]["step"] == 0);
  CHECK(t.count("optimizer.g0.p0.exp_avg") == 1);
  CHECK(t.count("optimizer.g0.p1.exp_avg") == 0);
  opt.zero_grad();
  CHECK(!a.grad().defined());
  opt.step();  // nothing to do
  CHECK(a.data().to_vector<double>()[0] == Approx(0.9));
}

TEST_CASE("optim: parameter groups, per-group lr and set_lr", "[optim]") {
  Variable a = param(), b = param();
  ParamGroup g1{{a}}, g2{{b}, 0.5, 0.0};  // g1 takes the default lr
  SGD opt(std::vector<ParamGroup>{g1, g2}, SGDOptions{.lr = 0.1});
  CHECK(opt.lr(0) == 0.1);
  CHECK(opt.lr(1) == 0.5);
  a.set_grad(Tensor::ones({3}, DType::Float64));
  b.set_grad(Tensor::ones({3}, DType::Float64));
  opt.step();
  CHECK(a.data().to_vector<double>()[0] == Approx(0.9));
  CHECK(b.data().to_vector<double>()[0] == Approx(0.5));
  opt.set_lr(0.01);
  CHECK(opt.lr(0) == 0.01);
  CHECK(opt.lr(1) == 0.01);
  opt.step();
  CHECK(a.data().to_vector<double>()[0] == Approx(0.89));
  CHECK(b.data().to_vector<double>()[0] == Approx(0.49));
}

TEST_CASE("optim: clear errors for bad gradients and parameters", "[optim]") {
  Variable a = param();
  Adam opt({a});
  a.set_grad(Tensor::zeros({3}, DType::Float32));
  CHECK_THROWS_WITH(opt.step(), Contains("gradient of parameter 'w' is float32, parameter is float64"));
  CHECK_THROWS_WITH(Adam({Variable(Tensor::zeros({2}, DType::Int64))}), Contains("only float32/float64"));
  CHECK_THROWS_WITH(Adam({param()}, AdamOptions{.beta1 = 1.0}), Contains("beta1"));
  CHECK_THROWS_WITH(SGD(std::vector<ParamGroup>{}), Contains("optimizer got an empty parameter list"));
}

TEST_CASE("optim: Adam works on real autograd gradients and lowers a loss", "[optim]") {
  manual_seed(3);
  Variable w(Tensor::randn({4, 1}), true, "w");
  Tensor x = Tensor::randn({16, 4});
  Tensor y = matmul(x, Tensor::from_vector<float>({1, -2, 0.5, 3}, {4, 1}));
  Adam opt({w}, AdamOptions{.lr = 0.05});
  auto loss = [&] { return mean(square(sub(matmul(Variable(x), w), Variable(y)))); };
  const double first = loss().item();
  for (int s = 0; s < 300; ++s) {
    opt.zero_grad();
    Variable l = loss();
    l.backward();
    opt.step();
  }
  CHECK(loss().item() < 1e-3 * first);
}
