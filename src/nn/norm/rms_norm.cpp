// RMSNorm and GroupScaling1D; equations in rms_norm.h.
#include "nn/norm/rms_norm.h"

#include <sstream>
#include <stdexcept>

#include "nn/norm/group_norm.h"

namespace nl {

Variable group_scale(const Variable& rows, int64_t groups, double eps) {
  return grouped_normalize(rows, groups, /*center=*/false, eps);
}

RMSNorm::RMSNorm(int64_t d, RMSNormConfig cfg, DType dtype) : Module("RMSNorm"), dim(d), cfg_(cfg) {
  if (d < 1) throw std::invalid_argument("RMSNorm: d must be >= 1, got " + std::to_string(d));
  if (!(cfg.eps >= 0)) throw std::invalid_argument("RMSNorm: eps must be >= 0, got " + std::to_string(cfg.eps));
  if (cfg.bias && !cfg.affine)
    throw std::invalid_argument("RMSNorm: the bias option needs affine = true (a bias without the gain)");
  if (cfg.affine) weight = register_parameter("weight", Tensor::ones({d}, dtype));
  if (cfg.bias) bias = register_parameter("bias", Tensor::zeros({d}, dtype));
}

Variable RMSNorm::forward(const Variable& x_in) {
  const Variable x = autocast(x_in, AutocastOp::Norm);  // statistics in float32 under autocast
  Rows r = to_rows(x, dim, "RMSNorm(" + std::to_string(dim) + ")");
  return from_rows(apply_affine(group_scale(r.rows, 1, cfg_.eps), weight, bias), r);
}

std::string RMSNorm::extra_repr() const {
  std::ostringstream o;
  o << dim << ", eps=" << cfg_.eps << ", affine=" << (cfg_.affine ? "true" : "false")
    << ", bias=" << (cfg_.bias ? "true" : "false");
  return o.str();
}

std::shared_ptr<Module> make_rms_norm(int64_t d, const NormOptions& o) {
  const DType dtype = o.dtype();
  RMSNormConfig c = o.with_common(RMSNormConfig{});
  c.bias = o.get<bool>("bias", false);
  return std::make_shared<RMSNorm>(d, c, dtype);
}

}  // namespace nl
