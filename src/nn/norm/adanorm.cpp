// AdaNorm (Xu et al. 2019, Eq. 9); equations in adanorm.h.
#include "nn/norm/adanorm.h"

#include <sstream>
#include <stdexcept>

namespace nl {

AdaNorm::AdaNorm(int64_t d, AdaNormConfig cfg) : Module("AdaNorm"), dim(d), cfg_(cfg) {
  if (d < 1) throw std::invalid_argument("AdaNorm: d must be >= 1, got " + std::to_string(d));
  if (cfg.norm.eps < 0) throw std::invalid_argument("AdaNorm: eps must be >= 0, got " + std::to_string(cfg.norm.eps));
  cfg_.norm.affine = false;
  cfg_.norm.detach_mean = cfg_.norm.detach_std = false;
}

AdaNorm::AdaNorm(int64_t d, double C, double k, LayerNormConfig norm) : AdaNorm(d, AdaNormConfig{C, k, norm}) {}

Variable AdaNorm::forward(const Variable& x_in) {
  const Variable x = autocast(x_in, AutocastOp::Norm);  // statistics in float32 under autocast
  if (x.dim() < 1 || x.size(-1) != dim)
    throw std::invalid_argument("AdaNorm(" + std::to_string(dim) + "): input " + shape_str(x.shape()) +
                                " must end in " + std::to_string(dim));
  Variable y = layer_norm_normalize(x, cfg_.norm);
  // phi(y) = C (1 - k y) = (-C k) y + C, detached (Eq. 9).
  Variable phi = detach(affine(y, -cfg_.C * cfg_.k, cfg_.C));
  return mul(y, phi);
}

std::string AdaNorm::extra_repr() const {
  std::ostringstream o;
  o << dim << ", C=" << cfg_.C << ", k=" << cfg_.k << ", " << cfg_.norm.str();
  return o.str();
}

std::shared_ptr<Module> make_adanorm(int64_t d, const NormOptions& o) {
  AdaNormConfig ac;
  ac.norm = with_estimator_options(ac.norm, o);
  o.dtype();  // checked like every norm's, though AdaNorm has no parameters
  ac.C = o.get<double>("C", 1.0);
  ac.k = o.get<double>("k", 0.1);
  return std::make_shared<AdaNorm>(d, ac);
}

}  // namespace nl
