// GroupNorm and LN-G; equations in group_norm.h.
#include "nn/norm/group_norm.h"

#include <sstream>
#include <stdexcept>

#include "autograd/functions.h"
#include "nn/norm/layer_norm.h"

namespace nl {

void check_groups(int64_t d, int64_t groups, const std::string& who) {
  if (groups < 1 || d % groups != 0)
    throw std::invalid_argument(who + ": groups = " + std::to_string(groups) + " must be >= 1 and divide the " +
                                "feature dim " + std::to_string(d) + "; pick a divisor of " + std::to_string(d));
}

namespace {
// Biased variance, eps inside the sqrt, no gain/bias: one LayerNorm over the last dim.
LayerNormConfig plain_ln(double eps) {
  LayerNormConfig c = LayerNormConfig::variant("layernorm-simple");
  c.eps = eps;
  return c;
}

void check_eps(double eps, const std::string& who) {
  if (!(eps >= 0)) throw std::invalid_argument(who + ": eps must be >= 0, got " + std::to_string(eps));
}
}  // namespace

Variable grouped_normalize(const Variable& rows, int64_t groups, bool center, double eps) {
  const int64_t R = rows.size(0), D = rows.size(1);
  check_groups(D, groups, "grouped_normalize");
  Variable g = reshape(rows, {R, groups, D / groups});
  Variable y;
  if (center) {
    y = layer_norm_normalize(g, plain_ln(eps));
  } else {  // x / sqrt(mean(x^2) + eps) per group
    y = div(g, sqrt(affine(mean(square(g), {-1}, /*keepdim=*/true), 1.0, eps)));
  }
  return reshape(y, {R, D});
}

void register_affine(Module& m, int64_t d, bool affine, DType dtype, Variable& weight, Variable& bias) {
  if (!affine) return;
  weight = m.register_parameter("weight", Tensor::ones({d}, dtype));
  bias = m.register_parameter("bias", Tensor::zeros({d}, dtype));
}

Variable apply_affine(const Variable& y, const Variable& weight, const Variable& bias) {
  Variable z = weight.defined() ? mul(y, weight) : y;
  return bias.defined() ? add(z, bias) : z;
}

GroupedNorm::GroupedNorm(const std::string& type_name, int64_t d, GroupNormConfig cfg, DType dtype)
    : Module(type_name), dim(d), cfg_(cfg) {
  if (d < 1) throw std::invalid_argument(type_name + ": d must be >= 1, got " + std::to_string(d));
  check_groups(d, cfg.groups, type_name);
  check_eps(cfg.eps, type_name);
  register_affine(*this, d, cfg.affine, dtype, weight, bias);
}

Variable GroupNorm::forward(const Variable& x_in) {
  const Variable x = autocast(x_in, AutocastOp::Norm);  // statistics in float32 under autocast
  Rows r = to_rows(x, dim, "GroupNorm(" + std::to_string(dim) + ")");
  return r.image ? normalize_image_groups(x, r.shape) : normalize_rows(r);
}

Variable InstanceNorm::forward(const Variable& x_in) {
  const Variable x = autocast(x_in, AutocastOp::Norm);  // statistics in float32 under autocast
  const std::string who = "InstanceNorm(" + std::to_string(dim) + ")";
  if (x.dim() != 4)
    throw std::invalid_argument(who + ": input must be images [N, C, H, W], got " + shape_str(x.shape()) +
                                "; on features each value would be normalised alone (output 0): use layernorm, "
                                "groupnorm or lng for [N, D] / [B, T, D]");
  return normalize_image_groups(x, to_rows(x, dim, who).shape);
}

// Images: each group pools its C/G channels over all H x W pixels (torch.nn.GroupNorm).
Variable GroupedNorm::normalize_image_groups(const Variable& x, const Shape& s) const {
  Variable y = reshape(layer_norm_normalize(reshape(x, {s[0], cfg_.groups, s[1] / cfg_.groups * s[2] * s[3]}),
                                            plain_ln(cfg_.eps)),
                       s);
  if (!cfg_.affine) return y;
  return add(mul(y, reshape(weight, {1, dim, 1, 1})), reshape(bias, {1, dim, 1, 1}));
}

Variable LayerNormG::forward(const Variable& x_in) {
  const Variable x = autocast(x_in, AutocastOp::Norm);  // statistics in float32 under autocast
  if (x.dim() == 4 && x.size(1) == dim) {
    // Images: each pixel's channel groups, normalised and scaled in the NCHW layout by one kernel (the same
    // function as normalize_rows on one row per pixel, without the permutes).
    check_groups_hold_several(x.shape());
    LayerNormOptions o;  // plain_ln's flags: biased variance, eps inside the sqrt, centred, nothing detached
    o.eps = cfg_.eps;
    return layer_norm_channels_fused(x, cfg_.groups, o, weight, bias);
  }
  return normalize_rows(to_rows(x, dim, "LayerNormG(" + std::to_string(dim) + ")"));
}

void GroupedNorm::check_groups_hold_several(const Shape& input) const {
  // A group of one value is centred to 0 whatever the input (InstanceNorm refuses the same case): the norm
  // would output its bias alone and cut every gradient.
  if (cfg_.groups == dim && dim > 1)
    throw std::invalid_argument(type_name() + "(" + std::to_string(dim) + "): groups = " + std::to_string(cfg_.groups) +
                                " = the feature dim on " + shape_str(input) + ": each group holds one value, whose "
                                "normalised output is 0 for every input; use fewer groups (a divisor of " +
                                std::to_string(dim) + " below it)");
}

Variable GroupedNorm::normalize_rows(const Rows& r) const {
  check_groups_hold_several(r.shape);
  return from_rows(apply_affine(grouped_normalize(r.rows, cfg_.groups, true, cfg_.eps), weight, bias), r);
}

std::string GroupedNorm::extra_repr() const {
  std::ostringstream o;
  o << dim << ", groups=" << cfg_.groups << ", eps=" << cfg_.eps << ", affine=" << (cfg_.affine ? "true" : "false");
  return o.str();
}

namespace {
GroupNormConfig group_config(const NormOptions& o) {
  GroupNormConfig c = o.with_common(GroupNormConfig{});
  c.groups = o.get<int64_t>("groups", 1);
  return c;
}
}  // namespace

std::shared_ptr<Module> make_group_norm(int64_t d, const NormOptions& o) {
  const DType dtype = o.dtype();
  return std::make_shared<GroupNorm>(d, group_config(o), dtype);
}

std::shared_ptr<Module> make_layer_norm_g(int64_t d, const NormOptions& o) {
  const DType dtype = o.dtype();
  return std::make_shared<LayerNormG>(d, group_config(o), dtype);
}

std::shared_ptr<Module> make_instance_norm(int64_t d, const NormOptions& o) {
  const DType dtype = o.dtype();
  return std::make_shared<InstanceNorm>(d, GroupNormConfig{d, o.eps(), o.affine()}, dtype);
}

}  // namespace nl
