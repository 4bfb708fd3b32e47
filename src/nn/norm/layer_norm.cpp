// LayerNorm family (Xu et al. 2019): composite and fused paths; the equations are in layer_norm.h.
#include "nn/norm/layer_norm.h"

#include <sstream>
#include <stdexcept>

#include "nn/norm/factory.h"

namespace nl {

std::string norm_impl_name(NormImpl impl) { return impl == NormImpl::Fused ? "fused" : "composite"; }

const std::vector<std::string>& norm_impl_names() {
  static const std::vector<std::string> names{"fused", "composite"};
  return names;
}

NormImpl parse_norm_impl(const std::string& s) {
  if (s == norm_impl_name(NormImpl::Fused)) return NormImpl::Fused;
  if (s == norm_impl_name(NormImpl::Composite)) return NormImpl::Composite;
  throw std::invalid_argument("norm impl must be 'fused' or 'composite', got '" + s + "'");
}

LayerNormConfig LayerNormConfig::variant(const std::string& name) {
  const LayerNormVariant& v = layernorm_variant(name);
  if (v.identity)
    throw std::invalid_argument("'" + name + "' has no LayerNorm configuration (it is the identity)");
  LayerNormConfig c;
  c.affine = norm_descriptor(name).affine;
  c.detach_mean = v.detach_mean;
  c.detach_std = v.detach_std;
  return c;
}

std::string LayerNormConfig::str() const {
  std::ostringstream o;
  o << (unbiased ? "unbiased" : "biased") << ", eps=" << eps << (eps_inside ? " inside sqrt" : " on std")
    << (detach_mean ? ", detach mean" : "") << (detach_std ? ", detach std" : "") << ", " << norm_impl_name(impl);
  return o.str();
}

namespace {

// sqrt(v) for v >= 0 whose gradient at v = 0 is 0 instead of 1/(2 sqrt(0)) = inf. On a constant row
// (sigma = 0, eps added to the std) the chain rule would otherwise give inf * dvar/dx = inf * 0 = NaN;
// the fused kernel drops the std term there (its coefficient is 0), and so does this. The sqrt is
// taken of where(v > 0, v, 1) so its gradient is finite on every row, and the outer where sends
// gradient only to rows with v > 0 (the "double where" idiom).
Variable safe_sqrt(const Variable& v) {
  const Tensor pos = gt(v.data(), 0.0);
  const Variable ones(Tensor::ones(v.shape(), v.dtype(), v.device()));
  const Variable zeros(Tensor::zeros(v.shape(), v.dtype(), v.device()));
  return where(pos, sqrt(where(pos, v, ones)), zeros);
}

// Composite twin of layer_norm_fused: primitive ops, with detach nodes where the variant cuts. A float32
// input is normalised in float64 (Cast nodes on either side, seen in Tape::dump()), as the fused kernel
// and PyTorch's CPU LayerNorm accumulate their statistics in double: in float32 the row mean of a
// near-constant row loses the digits that x - mu keeps, ~2.5e-4 relative error in dx (issue 28).
Variable normalize_composite(const Variable& x_in, const LayerNormConfig& c) {
  const bool widen = x_in.dtype() == DType::Float32;
  if (widen) return to_dtype(normalize_composite(to_dtype(x_in, DType::Float64), c), DType::Float32);
  const Variable& x = x_in;
  const int64_t H = x.size(-1);
  Variable mu = mean(x, {-1}, /*keepdim=*/true);
  Variable d = sub(x, c.detach_mean ? detach(mu) : mu);  // numerator x - mu (mu cut for detach-mean)
  // Variance from the live centring, as torch.std: its gradient 2(x_j - mu)/n does not depend on
  // whether mu is differentiated (sum_j (x_j - mu) = 0), so detach-mean cuts only the numerator.
  Variable dv = c.detach_mean ? sub(x, mu) : d;
  Variable var = affine(sum(square(dv), {-1}, true), 1.0 / (double)(c.unbiased ? H - 1 : H), 0.0);
  Variable D = c.eps_inside ? sqrt(affine(var, 1.0, c.eps)) : affine(safe_sqrt(var), 1.0, c.eps);
  return div(d, c.detach_std ? detach(D) : D);
}

LayerNormOptions kernel_options(const LayerNormConfig& c) {
  LayerNormOptions o;
  o.eps = c.eps;
  o.unbiased = c.unbiased;
  o.eps_inside = c.eps_inside;
  o.center = true;
  o.detach_mean = c.detach_mean;
  o.detach_std = c.detach_std;
  return o;
}

}  // namespace

Variable layer_norm_normalize(const Variable& x, const LayerNormConfig& c) {
  if (x.dim() < 1) throw std::invalid_argument("layer_norm: input must have at least one dim");
  if (x.size(-1) < (c.unbiased ? 2 : 1))
    throw std::invalid_argument("layer_norm: last dim of " + shape_str(x.shape()) +
                                " is too small to normalise with the unbiased std (needs >= 2)");
  if (c.impl == NormImpl::Composite) return normalize_composite(x, c);
  return layer_norm_fused(x, kernel_options(c));
}

LayerNorm::LayerNorm(int64_t d, LayerNormConfig cfg, DType dtype) : Module("LayerNorm"), dim(d), cfg_(cfg) {
  if (d < 1) throw std::invalid_argument("LayerNorm: d must be >= 1, got " + std::to_string(d));
  if (cfg.eps < 0) throw std::invalid_argument("LayerNorm: eps must be >= 0, got " + std::to_string(cfg.eps));
  if (cfg.affine) {
    weight = register_parameter("weight", Tensor::ones({d}, dtype));
    bias = register_parameter("bias", Tensor::zeros({d}, dtype));
  }
}

Variable LayerNorm::forward(const Variable& x_in) {
  const Variable x = autocast(x_in, AutocastOp::Norm);  // statistics in float32 under autocast
  if (x.dim() < 1 || x.size(-1) != dim)
    throw std::invalid_argument("LayerNorm(" + std::to_string(dim) + "): input " + shape_str(x.shape()) +
                                " must end in " + std::to_string(dim));
  if (cfg_.affine && cfg_.impl == NormImpl::Fused) {  // Eq. 1 with the gain and bias inside the kernel
    return layer_norm_fused(x, kernel_options(cfg_), weight, bias);
  }
  Variable y = layer_norm_normalize(x, cfg_);
  if (!cfg_.affine) return y;
  return add(mul(y, weight), bias);  // Eq. 1: g ⊙ y + b
}

std::string LayerNorm::extra_repr() const {
  return std::to_string(dim) + ", affine=" + (cfg_.affine ? "true" : "false") + ", " + cfg_.str();
}

LayerNormConfig with_estimator_options(LayerNormConfig c, const NormOptions& o) {
  c.impl = parse_norm_impl(o.get<std::string>("impl", norm_impl_name(c.impl)));
  c.eps = o.eps(c.eps);
  c.unbiased = o.get<bool>("unbiased", c.unbiased);
  c.eps_inside = o.get<bool>("eps_inside", c.eps_inside);
  return c;
}

std::shared_ptr<Module> make_layer_norm(int64_t d, const NormOptions& o) {
  LayerNormConfig c = with_estimator_options(LayerNormConfig::variant(o.norm()), o);
  c.affine = o.affine(c.affine);
  return std::make_shared<LayerNorm>(d, c, o.dtype());
}

}  // namespace nl
