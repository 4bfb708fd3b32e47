// GroupNorm (torch semantics), LN-G (Ni et al. 2024) and RMSNorm (Zhang & Sennrich 2019): known values,
// float64 gradchecks, the relations between them (LN-G with G = 1 is LayerNorm; GroupNorm = LN-G on
// tokens but not on images), and errors for bad options.
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector<double>(v, s); }
nlohmann::json opts64(nlohmann::json o = nlohmann::json::object()) {
  o["dtype"] = "float64";
  return o;
}
}  // namespace

TEST_CASE("groupnorm: an image equals torch.nn.GroupNorm", "[nn][norm][groupnorm]") {
  // Reference: torch 1.13, float64, torch.nn.GroupNorm(2, 4, eps=1e-5) with weight [1, 2, -1, 0.5] and
  // bias [0, 0.5, 1, -1], on the [2, 4, 2, 2] input below (/usr/bin/python3, printed with tolist()).
  const std::vector<double> xi{-1.0, -0.53, -0.06, 0.41, 0.88, 1.35, 1.82, 2.29, 2.76, 0.13, 0.6,
                               1.07, 1.54, 2.01, 2.48, 2.95, 3.42, 0.79, 1.26, 1.73, 2.2,  2.67,
                               3.14, 3.61, 4.08, 4.55, 1.92, 2.39, 2.86, 3.33, 3.8,  4.27};
  const std::vector<double> want{
      -1.5275186459727847, -1.0910847471234177, -0.6546508482740506, -0.21821694942468364, 0.9364338988493671,
      1.8093016965481015,  2.682169494246835,   3.5550372919455695,  -0.10341958808785841, 2.61507550949628,
      2.129260796239799,   1.6434460829833175,  -1.0788156848634187, -0.835908328235178,   -0.5930009716069377,
      -0.350093614978697,  1.103419588087858,   -1.6150755094962794, -1.1292607962397987,  -0.6434460829833176,
      0.18473726054632644, 1.1563666870592868,  2.1279961135722507,  3.099625540085211,    0.22812447011721607,
      -0.30537773436059196, 2.6799643885684157, 2.1464621840906073,  -1.3064799898064003,  -1.0397288875674962,
      -0.7729777853285931, -0.5062266830896888};
  auto gn = make_norm("groupnorm", 4, opts64({{"groups", 2}}));
  CHECK(gn->type_name() == "GroupNorm");
  assign(gn->param("weight"), f64({1, 2, -1, 0.5}, {4}));
  assign(gn->param("bias"), f64({0, 0.5, 1, -1}, {4}));
  auto got = vals(gn->forward(Variable(f64(xi, {2, 4, 2, 2}))).data());
  // The inputs above are torch's values rounded to 1e-16 relative; outputs agree to that order.
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-12));
}

TEST_CASE("lng and rmsnorm: forward by hand", "[nn][norm][lng]") {
  // LN-G with 2 groups on one token [1, 3, 10, 14]: each pair -> [-1, 1] (up to eps), then gain/bias.
  auto lng = make_norm("ln-g", 4, opts64({{"groups", 2}, {"eps", 0.0}}));  // the alias
  CHECK(lng->type_name() == "LayerNormG");
  assign(lng->param("weight"), f64({1, 2, 3, 4}, {4}));
  assign(lng->param("bias"), f64({0, 1, 0, -1}, {4}));
  auto y = vals(lng->forward(Variable(f64({1, 3, 10, 14}, {1, 4}))).data());
  const std::vector<double> ly{-1, 3, -3, 3};
  for (int i = 0; i < 4; ++i) CHECK(y[i] == Approx(ly[i]).margin(1e-12));
  // RMSNorm of [3, 4]: RMS = sqrt((9 + 16)/2 + eps).
  auto rms = make_norm("rmsnorm", 2, opts64({{"eps", 0.5}, {"bias", true}}));
  assign(rms->param("weight"), f64({2, -1}, {2}));
  assign(rms->param("bias"), f64({0.5, 0.25}, {2}));
  auto r = vals(rms->forward(Variable(f64({3, 4}, {1, 2}))).data());
  CHECK(r[0] == Approx(2 * 3 / std::sqrt(13.0) + 0.5).margin(1e-14));
  CHECK(r[1] == Approx(-4 / std::sqrt(13.0) + 0.25).margin(1e-14));
  CHECK(make_norm("rmsnorm", 6)->num_parameters() == 6);  // gain only by default
}

TEST_CASE("groupnorm lng rmsnorm: float64 gradcheck on tokens and images", "[nn][norm][groupnorm][grad]") {
  for (const char* name : {"groupnorm", "lng", "rmsnorm"})
    for (const Shape& s : {Shape{2, 3, 6}, Shape{2, 6, 2, 2}}) {
      INFO(name << " " << shape_str(s));
      manual_seed(3);
      auto o = opts64();
      if (std::string(name) != "rmsnorm") o["groups"] = 3;
      auto norm = make_norm(name, 6, o);
      for (auto& p : norm->parameters()) assign(p, Tensor::randn({6}, 1.0, 0.5, DType::Float64));
      NL_GRADCHECK([&](const std::vector<Variable>& in) { return norm->forward(in[0]); }, {leaf(s, 0.5, 1.5)});
      const Variable x(Tensor::randn(s, 0.0, 1.0, DType::Float64));
      NL_GRADCHECK([&](const std::vector<Variable>&) { return norm->forward(x); }, norm->parameters());
    }
}

TEST_CASE("lng: one group is LayerNorm, groupnorm equals lng on tokens, not on images", "[nn][norm][lng]") {
  manual_seed(4);
  const Tensor tokens = Tensor::randn({2, 3, 8}, 1.0, 2.0, DType::Float64);
  auto ln = make_norm("layernorm", 8, opts64());
  CHECK(max_abs_diff(make_norm("lng", 8, opts64())->forward(Variable(tokens)).data(), ln->forward(Variable(tokens)).data()) <
        1e-13);
  auto gn = make_norm("groupnorm", 8, opts64({{"groups", 4}}));
  auto lng = make_norm("lng", 8, opts64({{"groups", 4}}));
  CHECK(max_abs_diff(gn->forward(Variable(tokens)).data(), lng->forward(Variable(tokens)).data()) < 1e-14);
  // Images: LN-G normalises each pixel's channel groups ("LN-G-Position"); GroupNorm pools H x W too.
  const Tensor img = Tensor::randn({2, 8, 3, 3}, 1.0, 2.0, DType::Float64);
  Tensor y_lng = lng->forward(Variable(img)).data();
  Tensor per_pixel = lng->forward(Variable(img.permute({0, 2, 3, 1}).reshape({18, 8}))).data();
  CHECK(max_abs_diff(y_lng.permute({0, 2, 3, 1}).reshape({18, 8}), per_pixel) < 1e-14);
  CHECK(max_abs_diff(gn->forward(Variable(img)).data(), y_lng) > 0.1);
  // GroupNorm on an image: every group of every image has mean 0 and variance ~1 over (C/G, H, W).
  auto yg = vals(gn->forward(Variable(img)).data());
  for (int n = 0; n < 2; ++n)
    for (int g = 0; g < 4; ++g) {
      double m = 0, v = 0;
      for (int i = 0; i < 18; ++i) m += yg[(size_t)(n * 72 + g * 18 + i)] / 18;
      for (int i = 0; i < 18; ++i) v += std::pow(yg[(size_t)(n * 72 + g * 18 + i)] - m, 2) / 18;
      CHECK(std::abs(m) < 1e-12);
      CHECK(v == Approx(1.0).epsilon(1e-4));
    }
}

TEST_CASE("groupnorm lng rmsnorm: bad options give clear errors", "[nn][norm][groupnorm]") {
  CHECK_THROWS_WITH(make_norm("groupnorm", 6, {{"groups", 4}}),
                    Contains("groups = 4 must be >= 1 and divide the feature dim 6") && Contains("pick a divisor of 6"));
  CHECK_THROWS_WITH(make_norm("lng", 6, {{"groups", 0}}), Contains("groups = 0"));
  // One value per group on features or tokens: centred to 0 for every input (as InstanceNorm refuses).
  for (const char* name : {"groupnorm", "lng"}) {
    auto one = make_norm(name, 6, opts64({{"groups", 6}}));
    CHECK_THROWS_WITH(one->forward(Variable(Tensor::randn({2, 6}, 0.0, 1.0, DType::Float64))),
                      Contains("groups = 6 = the feature dim") && Contains("use fewer groups"));
  }
  // On images a groupnorm group pools H x W pixels: one channel per group is InstanceNorm, allowed.
  CHECK_NOTHROW(make_norm("groupnorm", 6, opts64({{"groups", 6}}))->forward(
      Variable(Tensor::randn({2, 6, 2, 2}, 0.0, 1.0, DType::Float64))));
  CHECK_THROWS_WITH(make_norm("lng", 6, {{"groups", 2.5}}), Contains("'groups' has the wrong type"));
  CHECK_THROWS_WITH(make_norm("lng", 6, {{"impl", "fused"}}), Contains("unknown option 'impl'") && Contains("groups"));
  CHECK_THROWS_WITH(make_norm("rmsnorm", 6, {{"affine", false}, {"bias", true}}), Contains("needs affine = true"));
  CHECK_THROWS_WITH(make_norm("groupnorm", 6, {{"eps", -1.0}}), Contains("eps must be >= 0"));
  CHECK_THROWS_WITH(make_norm("rmsnorm", 6)->forward(Variable(Tensor::randn({2, 5}))), Contains("must be [N, 6]"));
  CHECK(norm_option_keys("ln-g") == norm_option_keys("lng"));
}
