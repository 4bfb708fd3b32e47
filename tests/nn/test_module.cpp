// Module: names, registration order, state_dict round trip, strict loading, train/eval, zero_grad.
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
// The paper's MLP block shape: Linear -> norm -> ReLU -> Linear, with a buffer to test buffers.
struct Block : Module {
  std::shared_ptr<Linear> fc1, fc2;
  std::shared_ptr<Module> norm;
  std::shared_ptr<Dropout> drop;
  Block(int64_t d, const std::string& norm_name = "layernorm") : Module("Block") {
    fc1 = register_module("fc1", std::make_shared<Linear>(4, d));
    norm = register_module("norm", make_norm(norm_name, d, {{"impl", "composite"}}));
    drop = register_module("drop", std::make_shared<Dropout>(0.5));
    fc2 = register_module("fc2", std::make_shared<Linear>(d, 2));
    register_buffer("steps", Tensor::zeros({1}, DType::Int64));
  }
  Variable forward(const Variable& x) override { return (*fc2)(drop->forward(relu(norm->forward((*fc1)(x))))); }
};
struct TwoInputs : Module {
  TwoInputs() : Module("TwoInputs") {}
};
}  // namespace

TEST_CASE("Module: named_parameters are dotted, in registration order, and name the Variables", "[nn][module]") {
  Block b(3);
  std::vector<std::string> want{"fc1.weight", "fc1.bias", "norm.weight", "norm.bias", "fc2.weight", "fc2.bias"};
  std::vector<std::string> got, vnames;
  for (auto& [n, v] : b.named_parameters()) {
    got.push_back(n);
    vnames.push_back(v.name());
    CHECK(v.requires_grad());
    CHECK(v.is_leaf());
  }
  CHECK(got == want);
  CHECK(vnames == want);
  CHECK(b.parameters().size() == 6);
  CHECK(b.num_parameters() == (4 * 3 + 3) + (3 + 3) + (3 * 2 + 2));
  CHECK(b.named_buffers().size() == 1);
  CHECK(b.named_buffers()[0].first == "steps");
  std::vector<std::string> mods;
  for (auto& [n, m] : b.named_modules()) mods.push_back(n + ":" + m->type_name());
  CHECK(mods == std::vector<std::string>{":Block", "fc1:Linear", "norm:LayerNorm", "drop:Dropout", "fc2:Linear"});

  // Nesting renames the Variables with the full dotted path.
  Sequential outer;
  outer.push_back(std::make_shared<Linear>(2, 4));
  auto inner = std::make_shared<Block>(3);
  outer.push_back(inner);
  CHECK(outer.named_parameters()[2].first == "1.fc1.weight");
  CHECK(inner->fc1->weight.name() == "1.fc1.weight");
  CHECK(outer.named_buffers()[0].first == "1.steps");
  // A parameter registered after the module was attached also gets the full name.
  struct Late : Module {
    Late() : Module("Late") {}
    void add() { register_parameter("late", Tensor::zeros({2})); }
  };
  auto late = std::make_shared<Late>();
  outer.push_back(late);
  late->add();
  CHECK(late->param("late").name() == "2.late");

  CHECK_THROWS_WITH(b.register_parameter("fc1", Tensor::zeros({1})), Contains("already registered"));
  CHECK_THROWS_WITH(b.register_buffer("a.b", Tensor::zeros({1})), Contains("no '.'"));
  CHECK_THROWS_AS(b.param("nope"), std::out_of_range);
  CHECK_THROWS_WITH(TwoInputs().forward(Variable(Tensor::zeros({1}))),
                    Contains("module TwoInputs has no single-input forward"));
  CHECK_THAT(b.repr(), Contains("(fc1): Linear(in=4, out=3, bias=true)") && Contains("(norm): LayerNorm(3, affine=true"));
}

TEST_CASE("Module: state_dict round trip restores outputs", "[nn][module]") {
  manual_seed(1);
  Block a(5);
  a.eval();
  {
    NoGradGuard ng;
    Tensor w = a.norm->param("weight").data();
    w.copy_(Tensor::rand({5}, 0.5, 1.5));  // non-trivial gain
  }
  a.set_buffer("steps", Tensor::full({1}, 42, DType::Int64));
  StateDict sd = a.state_dict();
  CHECK(sd.size() == 7);
  CHECK(sd.count("norm.weight"));
  StateDict snap;
  for (auto& [k, t] : sd) snap[k] = t.clone();

  manual_seed(2);
  Block b(5);
  b.eval();
  Variable x(Tensor::randn({3, 4}));
  CHECK(max_abs_diff(a(x).data(), b(x).data()) > 1e-3);
  b.load_state_dict(snap);
  CHECK(max_abs_diff(a(x).data(), b(x).data()) == 0.0);
  CHECK(b.buffer("steps").item() == 42);
  // Loaded values are copies: changing the snapshot afterwards does not change b.
  snap["fc1.weight"].fill_(0);
  CHECK(max_abs(b.fc1->weight.data()) > 0);
  // dtype is converted to the module's.
  StateDict sd64;
  for (auto& [k, t] : a.state_dict()) sd64[k] = is_floating(t.dtype()) ? t.to(DType::Float64) : t;
  b.load_state_dict(sd64);
  CHECK(b.fc1->weight.dtype() == DType::Float32);
}

TEST_CASE("Module: strict load lists missing, unexpected and mis-shaped keys in one error", "[nn][module]") {
  Block a(3), b(3);
  Tensor before = b.fc2->weight.data().clone();
  StateDict sd = a.state_dict();
  sd.erase("norm.bias");
  sd.erase("steps");
  sd["extra.weight"] = Tensor::zeros({2});
  sd["fc2.weight"] = Tensor::zeros({3, 3});
  try {
    b.load_state_dict(sd);
    FAIL("expected an error");
  } catch (const std::invalid_argument& e) {
    std::string m = e.what();
    CHECK_THAT(m, Contains("missing keys (2): norm.bias, steps"));
    CHECK_THAT(m, Contains("unexpected keys (1): extra.weight"));
    CHECK_THAT(m, Contains("size mismatch (1): fc2.weight (checkpoint [3, 3] vs model [2, 3])"));
  }
  CHECK(max_abs_diff(b.fc2->weight.data(), before) == 0.0);  // nothing was loaded
  // Non-strict: missing/unexpected are fine, shapes still must match.
  CHECK_THROWS_WITH(b.load_state_dict(sd, false), Contains("size mismatch"));
  sd["fc2.weight"] = a.fc2->weight.data();
  b.load_state_dict(sd, false);
  CHECK(max_abs_diff(b.fc2->weight.data(), a.fc2->weight.data()) == 0.0);
  CHECK(max_abs_diff(b.fc1->weight.data(), a.fc1->weight.data()) == 0.0);
}

TEST_CASE("Module: train/eval propagate, zero_grad clears gradients", "[nn][module]") {
  manual_seed(3);
  Sequential outer;
  auto blk = std::make_shared<Block>(3);
  outer.push_back(blk);
  CHECK(blk->drop->is_training());
  outer.eval();
  for (auto& [n, m] : outer.named_modules()) CHECK(!m->is_training());
  Variable x(Tensor::randn({2, 4}));
  CHECK(max_abs_diff(outer(x).data(), outer(x).data()) == 0.0);  // dropout off
  outer.train();
  for (auto& [n, m] : outer.named_modules()) CHECK(m->is_training());
  Variable y = outer(x);
  sum(y).backward();
  for (auto& p : outer.parameters()) CHECK(p.grad().defined());
  outer.zero_grad();
  for (auto& p : outer.parameters()) CHECK(!p.grad().defined());
}

TEST_CASE("Module: to(dtype) converts parameters", "[nn][module]") {
  Block b(3);
  b.to(DType::Float64);
  for (auto& p : b.parameters()) {
    CHECK(p.dtype() == DType::Float64);
    CHECK(p.requires_grad());
  }
  CHECK(b.buffer("steps").dtype() == DType::Int64);
  CHECK(b(Variable(Tensor::randn({2, 4}, 0, 1, DType::Float64))).dtype() == DType::Float64);
}

TEST_CASE("make_norm: names, options and errors", "[nn][norm][factory]") {
  CHECK(layernorm_family_names() == std::vector<std::string>{"none", "layernorm", "layernorm-simple", "detachnorm",
                                                             "detach-mean", "detach-variance", "adanorm"});
  CHECK(norm_names() == std::vector<std::string>{"none", "layernorm", "layernorm-simple", "detachnorm", "detach-mean",
                                                 "detach-variance", "adanorm", "batchnorm", "powernorm-v", "powernorm",
                                                 "groupnorm", "lng", "rmsnorm"});
  const auto& family = layernorm_family_names();
  for (auto& n : norm_names()) {
    auto m = make_norm(n, 6);
    INFO(n);
    const bool in_family = std::find(family.begin(), family.end(), n) != family.end();
    CHECK(m->num_parameters() == (n == "rmsnorm" ? 6 : n == "layernorm" || !in_family ? 12 : 0));
    CHECK(m->forward(Variable(Tensor::randn({2, 6}))).shape() == Shape{2, 6});
  }
  CHECK(make_norm("none", 4)->type_name() == "NoNorm");
  CHECK(make_norm("adanorm", 4)->type_name() == "AdaNorm");
  auto ln = std::dynamic_pointer_cast<LayerNorm>(
      make_norm("detach-mean", 4, {{"impl", "composite"}, {"eps", 0.0}, {"unbiased", true}, {"eps_inside", false}}));
  REQUIRE(ln);
  CHECK(ln->config().impl == NormImpl::Composite);
  CHECK(ln->config().detach_mean);
  CHECK(!ln->config().detach_std);
  CHECK(!ln->config().affine);
  CHECK(ln->config().eps == 0.0);
  CHECK(ln->config().unbiased);
  CHECK(!ln->config().eps_inside);
  auto ada = std::dynamic_pointer_cast<AdaNorm>(make_norm("adanorm", 4, {{"C", 2.0}, {"k", 0.2}}));
  REQUIRE(ada);
  CHECK(ada->config().C == 2.0);
  CHECK(ada->config().k == 0.2);
  CHECK(ada->config().norm.impl == NormImpl::Fused);
  CHECK(make_norm("layernorm-simple", 4, {{"affine", true}})->num_parameters() == 8);

  CHECK_THROWS_WITH(make_norm("batchnorm2d", 4),
                    Contains("unknown norm 'batchnorm2d'") &&
                        Contains("none, layernorm, layernorm-simple, detachnorm, detach-mean, detach-variance, adanorm, "
                                 "batchnorm, powernorm-v, powernorm, groupnorm, lng, rmsnorm, instancenorm"));
  CHECK_THROWS_WITH(make_norm("layernorm", 4, {{"epsilon", 1e-5}}),
                    Contains("unknown option 'epsilon'") && Contains("valid: impl, eps, unbiased, eps_inside"));
  CHECK_THROWS_WITH(make_norm("layernorm", 4, {{"C", 2}}), Contains("unknown option 'C'"));
  CHECK_THROWS_WITH(make_norm("adanorm", 4, {{"affine", true}}), Contains("valid: impl, eps, unbiased, eps_inside, dtype, C, k"));
  CHECK_THROWS_WITH(make_norm("adanorm", 4, {{"C", "two"}}), Contains("'C' has the wrong type"));
  CHECK_THROWS_WITH(make_norm("layernorm", 4, {{"impl", "cuda"}}), Contains("'fused' or 'composite'"));
  CHECK_THROWS_AS(make_norm("layernorm", 4, nlohmann::json::array({1})), std::invalid_argument);
  CHECK_THROWS_AS(make_norm("layernorm", 0), std::invalid_argument);
  CHECK_THROWS_WITH(make_norm("layernorm", 4)->forward(Variable(Tensor::zeros({2, 5}))), Contains("must end in 4"));
}
