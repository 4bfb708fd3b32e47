// PN-V and PN (Shen et al. 2020); equations in power_norm.h, PN's backward in
// autograd/functions/power_norm.cpp.
#include "nn/norm/power_norm.h"

#include <sstream>
#include <stdexcept>
#include <utility>

#include "nn/norm/group_norm.h"
#include "nn/norm/rms_norm.h"
#include "nn/norm/stats_sync.h"

namespace nl {

namespace {
void check_common(int64_t d, double eps, bool layer_scale, int64_t groups, const std::string& who) {
  if (d < 1) throw std::invalid_argument(who + ": d must be >= 1, got " + std::to_string(d));
  if (!(eps >= 0)) throw std::invalid_argument(who + ": eps must be >= 0, got " + std::to_string(eps));
  if (layer_scale) check_groups(d, groups, who + " layer_scale_groups");
}

void check_alpha(double a, const char* name, const std::string& who) {
  if (!(a >= 0 && a <= 1))
    throw std::invalid_argument(who + ": " + name + " must be in [0, 1] (the weight of the old running value), got " +
                                std::to_string(a));
}

void register_power_buffers(Module& m, int64_t d, DType dtype) {
  m.register_buffer("running_phi", Tensor::ones({d}, dtype));  // psi^2, init 1 as the code
}

// running <- a running + (1 - a) batch  (Eq. 10), in place.
void ema_update(Tensor running, const Tensor& batch, double a) {
  running.copy_(add(affine(running, a, 0.0), affine(batch.to(running.dtype()), 1.0 - a, 0.0)));
}

// y = x / sqrt(running_phi + eps) with running statistics only (eval of PN-V and PN).
Variable eval_scale(const Variable& h, const Tensor& running_phi, double eps) {
  return div(h, Variable(sqrt(affine(running_phi.to(h.dtype()), 1.0, eps))));
}
}  // namespace

// ---------------------------------------------------------------------------------------------- PN-V

PowerNormV::PowerNormV(int64_t d, PowerNormVConfig cfg, DType dtype) : MaskedNorm("PowerNormV"), dim(d), cfg_(cfg) {
  check_common(d, cfg.eps, cfg.layer_scale, cfg.layer_scale_groups, "PowerNormV");
  check_alpha(cfg.alpha_fwd, "alpha_fwd", "PowerNormV");
  register_affine(*this, d, cfg.affine, dtype, weight, bias);
  register_power_buffers(*this, d, dtype);
}

Variable PowerNormV::forward_masked(const Variable& x_in, const Tensor& pad_mask) {
  const Variable x = autocast(x_in, AutocastOp::Norm);  // statistics in float32 under autocast
  const std::string who = "PowerNormV(" + std::to_string(dim) + ")";
  Rows r = to_rows(x, dim, who);
  KeptRows k = keep_weights(pad_mask, r, x.dtype(), who);
  Variable h = cfg_.layer_scale ? group_scale(r.rows, cfg_.layer_scale_groups) : r.rows;
  Variable y;
  if (is_training()) {
    k = synced_rows(std::move(k));  // --sync-batch-stats (stats_sync.h)
    Variable psi2 = kept_mean(square(h), k);  // psi_B^2 [1, d], differentiable (Eq. 4)
    y = div(h, sqrt(affine(psi2, 1.0, cfg_.eps)));
    if (has_batch_stats_hooks()) run_batch_stats_hooks({Variable(), psi2, Tensor(), buffer("running_phi").clone()});
    NoGradGuard ng;
    ema_update(buffer("running_phi"), psi2.data().reshape({dim}), cfg_.alpha_fwd);
  } else {
    y = eval_scale(h, buffer("running_phi"), cfg_.eps);
  }
  return from_rows(apply_affine(y, weight, bias), r);
}

std::string PowerNormV::extra_repr() const {
  std::ostringstream o;
  o << dim << ", alpha_fwd=" << cfg_.alpha_fwd << ", eps=" << cfg_.eps;
  if (cfg_.layer_scale) o << ", layer_scale_groups=" << cfg_.layer_scale_groups;
  return o.str();
}

// ------------------------------------------------------------------------------------------------ PN

PowerNorm::PowerNorm(int64_t d, PowerNormConfig cfg, DType dtype) : MaskedNorm("PowerNorm"), dim(d), cfg_(cfg) {
  check_common(d, cfg.eps, cfg.layer_scale, cfg.layer_scale_groups, "PowerNorm");
  check_alpha(cfg.alpha_fwd, "alpha_fwd", "PowerNorm");
  check_alpha(cfg.alpha_bwd, "alpha_bwd", "PowerNorm");
  if (cfg.warmup_iters < 0)
    throw std::invalid_argument("PowerNorm: warmup_iters must be >= 0, got " + std::to_string(cfg.warmup_iters));
  register_affine(*this, d, cfg.affine, dtype, weight, bias);
  register_power_buffers(*this, d, dtype);
  register_buffer("ema_gz", Tensor::zeros({d}, dtype));
  register_buffer("iters", Tensor::scalar(0, DType::Int64));
  e_update_ = std::make_shared<PowerNormEUpdate>();
  e_update_->apply = [this](const Tensor& next_E) { apply_E(next_E); };
}

PowerNorm::~PowerNorm() { e_update_->apply = nullptr; }

void PowerNorm::apply_E(const Tensor& next_E) {
  NoGradGuard ng;
  buffer("ema_gz").copy_(next_E);
}

int64_t PowerNorm::next_iter() {
  Tensor iters = buffer("iters");
  if (iters_storage_.lock() != iters.storage() || iters.version() != iters_version_)
    iters_host_ = (int64_t)iters.item();  // loaded, moved or written elsewhere: read it once
  binary_into(BinaryOp::Add, iters, iters, Tensor::scalar(1, DType::Int64, iters.device()));
  iters_storage_ = iters.storage();
  iters_version_ = iters.version();
  return ++iters_host_;
}

Variable PowerNorm::forward_masked(const Variable& x_in, const Tensor& pad_mask) {
  const Variable x = autocast(x_in, AutocastOp::Norm);  // statistics in float32 under autocast
  const std::string who = "PowerNorm(" + std::to_string(dim) + ")";
  Rows r = to_rows(x, dim, who);
  KeptRows k = keep_weights(pad_mask, r, x.dtype(), who);
  // An E left pending by a backward pass that threw after this module's node ran (its callbacks were
  // dropped) is applied now, as the released code would have updated E in place.
  if (e_update_->next_E.defined()) apply_E(std::exchange(e_update_->next_E, Tensor()));
  Variable h = cfg_.layer_scale ? group_scale(r.rows, cfg_.layer_scale_groups) : r.rows;  // step 1
  if (!is_training()) return from_rows(apply_affine(eval_scale(h, buffer("running_phi"), cfg_.eps), weight, bias), r);

  Tensor phi = buffer("running_phi");
  const int64_t it = next_iter();
  Tensor psi2, fwd_scale, bwd_scale;
  {
    NoGradGuard ng;
    k = synced_rows(std::move(k));  // --sync-batch-stats (stats_sync.h); off by default: the released code never syncs
    psi2 = kept_mean(square(Variable(h.data())), k).data().reshape({dim});  // step 2
    if (has_batch_stats_hooks())  // no gradient flows through PN's statistics
      run_batch_stats_hooks({Variable(), Variable(psi2.reshape({1, dim})), Tensor(), phi.clone()});
    const Tensor batch_scale = sqrt(affine(psi2, 1.0, cfg_.eps));
    fwd_scale = it <= cfg_.warmup_iters ? batch_scale : sqrt(affine(phi.to(psi2.dtype()), 1.0, cfg_.eps));  // step 3
    bwd_scale = cfg_.bwd_scale_batch ? batch_scale : fwd_scale;
    const bool warm = it < cfg_.warmup_iters;  // step 4 (note < here, <= above, as the code)
    if (warm) phi.copy_(add(affine(phi, (double)(it - 1) / (double)it, 0.0), affine(psi2.to(phi.dtype()), 1.0 / (double)it, 0.0)));
    if (!warm || cfg_.warmup_double_update) ema_update(phi, psi2, cfg_.alpha_fwd);
  }
  Variable z = power_norm_fused(h, fwd_scale, bwd_scale, buffer("ema_gz"), cfg_.alpha_bwd, e_update_);  // step 5
  return from_rows(apply_affine(z, weight, bias), r);                                        // step 6
}

std::string PowerNorm::extra_repr() const {
  std::ostringstream o;
  o << dim << ", alpha_fwd=" << cfg_.alpha_fwd << ", alpha_bwd=" << cfg_.alpha_bwd << ", eps=" << cfg_.eps
    << ", warmup_iters=" << cfg_.warmup_iters << (cfg_.warmup_double_update ? "" : ", single warmup update")
    << ", bwd_scale=" << (cfg_.bwd_scale_batch ? "batch" : "running");
  if (cfg_.layer_scale) o << ", layer_scale_groups=" << cfg_.layer_scale_groups;
  return o.str();
}

namespace {
// The options PN-V and PN share (eps, affine, alpha_fwd, layer_scale, layer_scale_groups) on config C.
template <typename C>
C power_config(const NormOptions& o) {
  C c = o.with_common(C{});
  c.alpha_fwd = o.get<double>("alpha_fwd", c.alpha_fwd);
  c.layer_scale = o.get<bool>("layer_scale", c.layer_scale);
  c.layer_scale_groups = o.get<int64_t>("layer_scale_groups", c.layer_scale_groups);
  return c;
}
}  // namespace

std::shared_ptr<Module> make_power_norm_v(int64_t d, const NormOptions& o) {
  const DType dtype = o.dtype();
  return std::make_shared<PowerNormV>(d, power_config<PowerNormVConfig>(o), dtype);
}

std::shared_ptr<Module> make_power_norm(int64_t d, const NormOptions& o) {
  const DType dtype = o.dtype();
  PowerNormConfig c = power_config<PowerNormConfig>(o);
  c.alpha_bwd = o.get<double>("alpha_bwd", c.alpha_bwd);
  c.warmup_iters = o.get<int64_t>("warmup_iters", c.warmup_iters);
  c.warmup_double_update = o.get<bool>("warmup_double_update", c.warmup_double_update);
  const std::string bs = o.get<std::string>("bwd_scale", "batch");
  if (bs != "batch" && bs != "running")
    throw std::invalid_argument("make_norm(powernorm): bwd_scale must be 'batch' (released code: dL/dx / psi_B) or "
                                "'running' (paper Eq. 12: dL/dx / psi_{t-1}), got '" + bs + "'");
  c.bwd_scale_batch = bs == "batch";
  return std::make_shared<PowerNorm>(d, c, dtype);
}

}  // namespace nl
