// The small Vision Transformer (nn/models/vit.h): shapes and tokens, parameter count by hand, every
// norm slot from the factory (lng with groups), the class token's role, and clear errors.
#include "nn/models/vit.h"
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
VitConfig tiny(const std::string& norm = "layernorm", nlohmann::json opts = nullptr) {
  VitConfig c;
  c.image_size = 8;
  c.patch = 4;
  c.d_model = 12;
  c.layers = 2;
  c.n_heads = 3;
  c.ffn_dim = 24;
  c.norm = norm;
  c.norm_options = std::move(opts);
  return c;
}
}  // namespace

TEST_CASE("vit: the default shape maps CIFAR images to logits through 65 tokens", "[nn][vit]") {
  VisionTransformer v{VitConfig{}};
  CHECK(v.num_tokens() == 65);  // 1 + (32/4)^2
  CHECK(v.pos_embed.shape() == Shape{1, 65, 192});
  CHECK(v.layer_list.size() == 6);
  // parameters by hand: patch conv, class token, positions, 6 layers, final norm, head
  const int64_t d = 192, f = 768;
  const int64_t layer = 4 * (d * d + d) + (d * f + f) + (f * d + d) + 2 * 2 * d;
  CHECK(v.num_parameters() == (3 * 16 * d + d) + d + 65 * d + 6 * layer + 2 * d + (d * 10 + 10));
  VisionTransformer t{tiny()};
  CHECK(t(Variable(Tensor::randn({2, 3, 8, 8}))).shape() == Shape{2, 10});
}

TEST_CASE("vit: every norm slot takes the factory's norm with its options", "[nn][vit]") {
  VisionTransformer v{tiny("lng", {{"groups", 4}})};
  int lng = 0;
  for (const auto& [name, m] : v.named_modules())
    if (m->type_name() == "LayerNormG") ++lng;
  CHECK(lng == 2 * 2 + 1);
  CHECK_THAT(v.layer_norm->str(), Contains("groups=4"));
  for (const char* norm : {"rmsnorm", "batchnorm", "groupnorm"}) {
    INFO(norm);
    VisionTransformer w{tiny(norm)};
    CHECK(w(Variable(Tensor::randn({3, 3, 8, 8}))).shape() == Shape{3, 10});
  }
}

TEST_CASE("vit: the logits depend on the image through the class token only after attention", "[nn][vit]") {
  manual_seed(2);
  VisionTransformer v{tiny()};
  v.eval();
  Tensor a = Tensor::randn({1, 3, 8, 8});
  // change the last patch only: the class token attends to it, so the logits change
  std::vector<double> bv = vals(a);
  for (int c = 0; c < 3; ++c)
    for (int h = 4; h < 8; ++h)
      for (int w = 4; w < 8; ++w) bv[(c * 8 + h) * 8 + w] = 3.0;
  const Tensor b = Tensor::from_vector<double>(bv, {1, 3, 8, 8}).to(DType::Float32);
  const auto ya = vals(v(Variable(a)).data()), yb = vals(v(Variable(b)).data());
  double diff = 0;
  for (size_t i = 0; i < ya.size(); ++i) diff = std::max(diff, std::abs(ya[i] - yb[i]));
  CHECK(diff > 1e-4);
  // batching does not mix images (layernorm: per token)
  const auto yab = vals(v(Variable(cat(std::vector<Tensor>{a, b}, 0))).data());
  for (size_t i = 0; i < ya.size(); ++i) CHECK(yab[i] == Approx(ya[i]).margin(1e-5));
}

TEST_CASE("vit: bad shapes and options give clear errors", "[nn][vit]") {
  VitConfig c = tiny();
  c.patch = 3;
  CHECK_THROWS_WITH(VisionTransformer{c}, Contains("patch 3 must divide image_size 8"));
  c = tiny();
  c.n_heads = 5;
  CHECK_THROWS_WITH(VisionTransformer{c}, Contains("multiple of n_heads"));
  CHECK_THROWS_WITH(VisionTransformer{tiny("lng", {{"groups", 5}})}, Contains("groups = 5"));
  VisionTransformer v{tiny()};
  CHECK_THROWS_WITH(v(Variable(Tensor::randn({2, 1, 8, 8}))), Contains("[B, 3, 8, 8]"));
}
