// The tape shows where each variant cuts gradient: Detach nodes (marked) in the composite path,
// parameter names with their dotted module path, and AdaNorm's detached factor.
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
struct Net : Module {
  std::shared_ptr<Linear> fc1;
  std::shared_ptr<Module> norm;
  Net(const std::string& norm_name, const char* impl) : Module("Net") {
    fc1 = register_module("fc1", std::make_shared<Linear>(5, 6));
    norm = register_module("norm", make_norm(norm_name, 6, {{"impl", impl}}));
  }
  Variable forward(const Variable& x) override { return norm->forward(fc1->forward(x)); }
};

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::string dump_of(Net& net) {
  Tape::current().clear();
  Variable x(Tensor::randn({2, 5}));
  Variable y = net(x);
  std::string d = Tape::current().dump();
  sum(y).backward();
  return d;
}
}  // namespace

TEST_CASE("tape: DetachNorm's composite forward lists marked Detach nodes and parameter names", "[nn][norm][tape]") {
  manual_seed(31);
  Net net("detachnorm", "composite");
  std::string d = dump_of(net);
  INFO(d);
  CHECK_THAT(d, Contains("fc1.weight") && Contains("fc1.bias"));
  CHECK(count(d, "Detach <-") == 2);  // mean and std
  CHECK(count(d, "[detach: gradient stops here]") == 2);
  CHECK_THAT(d, Contains("(detached)"));
  CHECK(net.fc1->weight.grad().defined());  // gradient still reaches fc1 through the numerator
}

TEST_CASE("tape: each variant detaches exactly what it names", "[nn][norm][tape]") {
  manual_seed(32);
  const std::vector<std::pair<std::string, int>> want{
      {"layernorm", 0}, {"layernorm-simple", 0}, {"detach-mean", 1}, {"detach-variance", 1}, {"detachnorm", 2}, {"adanorm", 1}};
  for (auto& [name, n] : want) {
    Net net(name, "composite");
    std::string d = dump_of(net);
    INFO(name << "\n" << d);
    CHECK(count(d, "[detach: gradient stops here]") == n);
    if (name == "layernorm") CHECK_THAT(d, Contains("norm.weight") && Contains("norm.bias"));
  }
  // The fused path records one LayerNormFused node whose note names the cut.
  Net fused("detachnorm", "fused");
  std::string d = dump_of(fused);
  INFO(d);
  CHECK_THAT(d, Contains("LayerNormFused {detach_mean detach_std"));
  CHECK(count(d, "[detach: gradient stops here]") == 0);
}

TEST_CASE("tape: AdaNorm's factor C(1 - k y) is a detached node in both implementations", "[nn][norm][tape][adanorm]") {
  manual_seed(33);
  for (const char* impl : {"composite", "fused"}) {
    Net net("adanorm", impl);
    std::string d = dump_of(net);
    INFO(impl << "\n" << d);
    CHECK(count(d, "[detach: gradient stops here]") == 1);
    // The product takes the detached factor as its second input.
    CHECK_THAT(d, Contains("(detached) -> [2, 6]"));
    CHECK_THAT(d, Contains("Mul <-"));
  }
}

TEST_CASE("tape: NoGradGuard records nothing for a norm forward", "[nn][norm][tape]") {
  Net net("detachnorm", "composite");
  Tape::current().clear();
  {
    NoGradGuard ng;
    Variable y = net(Variable(Tensor::randn({2, 5})));
    CHECK(!y.requires_grad());
    CHECK(Tape::current().size() == 0);
  }
}
