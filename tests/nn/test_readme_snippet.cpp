// The embedding example of README.md ("Using normlab as a library"), compiled and run here so it
// cannot rot: the code between the snippet markers must equal the README's ```cpp block character for
// character, and its output must show what it claims (Xu et al. 2019, Theorem 1): LayerNorm-simple's
// input gradient is re-centred (sums to 0), DetachNorm's is g / sigma (here all positive, sum > 0).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#define main readme_main  // the snippet's main() becomes a function the test can call
// [snippet:readme-embedding]
// main.cpp: one loss through LayerNorm-simple and through DetachNorm. DetachNorm cuts the gradient
// through the mean and the std, so dL/dx is g / sigma instead of LayerNorm's re-centred W1 g, whose
// entries sum to 0 (Xu et al. 2019, Theorem 1).
#include <iostream>
#include "normlab/normlab.h"

int main() {
  nl::manual_seed(0);
  nl::Tensor x0 = nl::Tensor::randn({1, 4});
  nl::Variable w(nl::Tensor::from_vector<float>({1, 2, 3, 4}, {1, 4}));  // loss = sum(w * norm(x))
  for (const char* name : {"layernorm-simple", "detachnorm"}) {
    nl::Variable x(x0.clone(), /*requires_grad=*/true, "x");
    nl::Variable loss = nl::sum(nl::mul(nl::make_norm(name, 4)->forward(x), w));
    loss.backward();
    std::cout << name << ": dL/dx = " << x.grad().repr() << ", sum = " << nl::sum(x.grad()).item() << "\n";
  }
  return 0;
}
// [/snippet]
#undef main

namespace {
// Text between "// [snippet:<tag>]" and "// [/snippet]" (markers excluded) in `text`.
std::string between_markers(const std::string& text, const std::string& tag) {
  const std::string open = "// [snippet:" + tag + "]\n", close = "// [/snippet]";
  const size_t a = text.find(open), b = text.find(close, a);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  return text.substr(a + open.size(), b - a - open.size());
}
std::string read_file(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("README embedding example: matches the README and shows the detach's effect on the gradient", "[nn][docs]") {
  const std::string snippet = between_markers(read_file(__FILE__), "readme-embedding");
  const std::string readme = read_file(std::string(NORMLAB_SOURCE_DIR) + "/README.md");
  CHECK(readme.find("```cpp\n" + snippet + "```") != std::string::npos);

  std::ostringstream out;
  std::streambuf* old = std::cout.rdbuf(out.rdbuf());
  readme_main();
  std::cout.rdbuf(old);
  const std::string text = out.str();
  INFO(text);
  std::istringstream lines(text);
  std::string ln_simple, detach;
  std::getline(lines, ln_simple);
  std::getline(lines, detach);
  REQUIRE(ln_simple.rfind("layernorm-simple: dL/dx = Tensor(shape=[1, 4]", 0) == 0);
  REQUIRE(detach.rfind("detachnorm: dL/dx = Tensor(shape=[1, 4]", 0) == 0);
  const double sum_simple = std::stod(ln_simple.substr(ln_simple.find("sum = ") + 6));
  const double sum_detach = std::stod(detach.substr(detach.find("sum = ") + 6));
  CHECK(std::abs(sum_simple) < 1e-5);  // re-centred
  CHECK(sum_detach > 1.0);             // (1 + 2 + 3 + 4) / sigma
}
