// The norm table: one row per normalisation layer (factory.h, NormDescriptor). Every list of norm
// names, every check on a norm's kind and every CLI choice of the project derives from these rows; a new
// norm is its own file (module + a make_* factory) and one row here (docs/nn-norms.md shows how).
#include <memory>

#include "nn/activation.h"
#include "nn/norm/adanorm.h"
#include "nn/norm/batch_norm.h"
#include "nn/norm/factory.h"
#include "nn/norm/group_norm.h"
#include "nn/norm/layer_norm.h"
#include "nn/norm/no_norm.h"
#include "nn/norm/power_norm.h"
#include "nn/norm/rms_norm.h"

namespace nl {

namespace {
// "none": the identity, checking the family's options like the other members do.
std::shared_ptr<Module> make_no_norm(int64_t d, const NormOptions& o) {
  with_estimator_options(LayerNormConfig{}, o);
  o.dtype();
  return std::make_shared<NoNorm>(d);
}

std::vector<NormDescriptor> build_table() {
  const std::vector<std::string> family_keys{"impl", "eps", "unbiased", "eps_inside", "dtype"};
  auto family = [&](std::vector<std::string> extra) {
    auto v = family_keys;
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  auto keys = [](std::vector<std::string> extra) {
    std::vector<std::string> v{"eps", "dtype", "affine"};
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  const std::vector<std::string> ln = family({"affine"});
  using V = LayerNormVariant;
  // LayerNorm over an image's (C, H, W) = GroupNorm with one group, whatever G the caller uses elsewhere
  auto ln_on_images = [](int64_t c, int64_t) { return make_norm("groupnorm", c, {{"groups", 1}}); };
  //  name, aliases, help,
  //  features, images, batch statistics, affine, grouped LN, LayerNorm family, option keys, factory, image factory
  return {
      {"none", {}, "no normalisation, y = x (Xu et al. 2019, Table 1 w/o Norm)",
       true, true, false, false, false, V{true, false, false, false}, family({}), make_no_norm,
       [](int64_t, int64_t) { return std::shared_ptr<Module>(std::make_shared<Identity>()); }},
      {"layernorm", {}, "LayerNorm with gain and bias (Ba et al. 2016; Xu et al. 2019 Eq. 1)",
       true, true, false, true, true, V{}, ln, make_layer_norm, ln_on_images},
      {"layernorm-simple", {}, "LayerNorm without gain and bias (Xu et al. 2019)",
       true, false, false, false, false, V{}, ln, make_layer_norm, nullptr},
      {"detachnorm", {}, "LayerNorm-simple with mean and std detached (Xu et al. 2019, Eq. 5)",
       true, false, false, false, false, V{false, true, true, false}, ln, make_layer_norm, nullptr},
      {"detach-mean", {}, "LayerNorm-simple with the mean detached (Xu et al. 2019, Eq. 14)",
       true, false, false, false, false, V{false, true, false, false}, ln, make_layer_norm, nullptr},
      {"detach-variance", {}, "LayerNorm-simple with the std detached (Xu et al. 2019, Eq. 19)",
       true, false, false, false, false, V{false, false, true, false}, ln, make_layer_norm, nullptr},
      {"adanorm", {}, "AdaNorm: LayerNorm-simple times the detached C(1 - k y) (Xu et al. 2019, Eq. 9)",
       true, false, false, false, false, V{false, false, false, true}, family({"C", "k"}), make_adanorm, nullptr},
      {"batchnorm", {}, "BatchNorm over the non-pad tokens (Ioffe & Szegedy 2015; Shen et al. 2020)",
       true, true, true, true, false, std::nullopt, keys({"momentum", "reading", "released"}), make_batch_norm, nullptr},
      {"powernorm-v", {"pn-v"}, "PN-V: running quadratic mean, no centring (Shen et al. 2020)",
       true, false, true, true, false, std::nullopt, keys({"alpha_fwd", "layer_scale", "layer_scale_groups"}),
       make_power_norm_v, nullptr},
      {"powernorm", {}, "PowerNorm with the approximate backward (Shen et al. 2020, Algorithm 2)",
       true, false, true, true, false, std::nullopt,
       keys({"alpha_fwd", "alpha_bwd", "warmup_iters", "warmup_double_update", "bwd_scale", "layer_scale",
             "layer_scale_groups"}),
       make_power_norm, nullptr},
      {"groupnorm", {}, "GroupNorm: LayerNorm per group of features or channels (Wu & He 2018)",
       true, true, false, true, true, std::nullopt, keys({"groups"}), make_group_norm, nullptr},
      {"lng", {"ln-g"}, "LN-G: LayerNorm per group, LN-G-Position on images (Ni et al. 2024)",
       true, true, false, true, true, std::nullopt, keys({"groups"}), make_layer_norm_g, nullptr},
      {"rmsnorm", {}, "RMSNorm: scaling by the root mean square, no centring (Zhang & Sennrich 2019)",
       true, false, false, true, false, std::nullopt, keys({"bias"}), make_rms_norm, nullptr},
      {"instancenorm", {}, "InstanceNorm: per image and channel over H, W (Ulyanov et al. 2016)",
       false, true, false, true, false, std::nullopt, keys({}), make_instance_norm, nullptr},
  };
}
}  // namespace

const std::vector<NormDescriptor>& norm_table() {
  static const std::vector<NormDescriptor> table = build_table();
  return table;
}

}  // namespace nl
