// The one norm table of nn/norm/factory.h: every name list is filtered from it, instancenorm is in it
// (images only), make_image_norm builds every image name, and every row's flags, aliases and keys agree
// with the module its factory builds.
#include <set>

#include "nn/models/resnet_cifar.h"
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

TEST_CASE("norm registry: the lists are filtered from one registry", "[nn][norm][factory]") {
  CHECK(image_norm_names() == std::vector<std::string>{"none", "layernorm", "batchnorm", "groupnorm", "lng", "instancenorm"});
  std::vector<std::string> all = norm_names();
  all.push_back("instancenorm");
  CHECK(all_norm_names() == all);
  CHECK(std::find(norm_names().begin(), norm_names().end(), "instancenorm") == norm_names().end());
  CHECK(norm_option_keys("instancenorm") == std::vector<std::string>{"eps", "dtype", "affine"});
  CHECK_FALSE(norm_uses_batch_statistics("instancenorm"));
}

TEST_CASE("norm registry: instancenorm is GroupNorm with one channel per group, on images only", "[nn][norm][factory]") {
  manual_seed(5);
  const Tensor x = Tensor::randn({2, 3, 4, 5}, 1.0, 2.0, DType::Float64);
  auto in = make_norm("instancenorm", 3, {{"dtype", "float64"}});
  auto gn = make_norm("groupnorm", 3, {{"dtype", "float64"}, {"groups", 3}});
  CHECK(in->type_name() == "InstanceNorm");
  CHECK(max_abs_diff(in->forward(Variable(x)).data(), gn->forward(Variable(x)).data()) == 0);
  // each (image, channel) plane: mean 0, variance 1 (biased, up to eps)
  const auto y = vals(in->forward(Variable(x)).data());
  for (int p = 0; p < 6; ++p) {
    double m = 0, v = 0;
    for (int i = 0; i < 20; ++i) m += y[p * 20 + i] / 20;
    for (int i = 0; i < 20; ++i) v += (y[p * 20 + i] - m) * (y[p * 20 + i] - m) / 20;
    CHECK(m == Approx(0).margin(1e-12));
    CHECK(v == Approx(1).epsilon(1e-5));
  }
  CHECK_THROWS_WITH(in->forward(Variable(Tensor::randn({2, 3}))), Contains("images [N, C, H, W]") && Contains("layernorm"));
  CHECK_THROWS_WITH(make_norm("instancenorm", 3, {{"groups", 3}}), Contains("unknown option 'groups'"));
}

TEST_CASE("norm registry: make_image_norm builds every image name and refuses the others", "[nn][norm][factory]") {
  const Tensor x = Tensor::randn({2, 8, 3, 3});
  for (const auto& n : image_norm_names()) {
    INFO(n);
    CHECK(make_image_norm(n, 8, 2)->forward(Variable(x)).shape() == x.shape());
  }
  CHECK(make_image_norm("instancenorm", 8, 2)->type_name() == "InstanceNorm");
  CHECK_THROWS_WITH(make_image_norm("rmsnorm", 8, 2), Contains("valid on images") && Contains("instancenorm"));
}

TEST_CASE("norm table: every row's flags agree with the module its factory builds", "[nn][norm][factory]") {
  std::set<std::string> spellings;
  for (const NormDescriptor& d : norm_table()) {
    INFO(d.name);
    CHECK(spellings.insert(d.name).second);  // names and aliases are unique
    for (const auto& a : d.aliases) {
      CHECK(spellings.insert(a).second);
      CHECK(canonical_norm_name(a) == d.name);
      CHECK(&norm_descriptor(a) == &d);
    }
    CHECK_FALSE(d.help.empty());
    REQUIRE(d.make);
    const int64_t width = 8;  // divisible by every default group count
    auto m = make_norm(d.name, width);
    CHECK(uses_batch_statistics(*m) == d.batch_statistics);
    CHECK(norm_uses_batch_statistics(d.name) == d.batch_statistics);
    bool has_weight = false;
    for (const auto& [name, p] : m->named_parameters()) has_weight = has_weight || name == "weight";
    CHECK(has_weight == d.affine);
    for (const auto& k : d.keys) CHECK(norm_accepts_option(d.name, k));
    CHECK_FALSE(norm_accepts_option(d.name, "no-such-key"));
    if (d.family) {
      CHECK(std::find(layernorm_family_names().begin(), layernorm_family_names().end(), d.name) !=
            layernorm_family_names().end());
      if (!d.family->identity) {  // LayerNormConfig::variant reads the same flags
        const LayerNormConfig c = LayerNormConfig::variant(d.name);
        CHECK(c.detach_mean == d.family->detach_mean);
        CHECK(c.detach_std == d.family->detach_std);
        CHECK(c.affine == d.affine);
      }
    }
    if (d.features) {  // a [B, T, d] forward of the default build
      m->train();
      const Tensor x = Tensor::randn({2, 3, width});
      CHECK(norm_forward(*m, Variable(x), Tensor()).shape() == x.shape());
    }
  }
  CHECK_THROWS_WITH(norm_descriptor("no-such-norm"), Contains("unknown norm 'no-such-norm'") && Contains("rmsnorm"));
  CHECK_THROWS_WITH(layernorm_variant("batchnorm"), Contains("not in the LayerNorm family") && Contains("adanorm"));
  CHECK(norm_impl_names() == std::vector<std::string>{"fused", "composite"});
}
