// BatchNorm with padding masks and the released MaskSyncBatchNorm; equations in batch_norm.h.
#include "nn/norm/batch_norm.h"

#include <sstream>
#include <stdexcept>

#include "nn/norm/group_norm.h"
#include "nn/norm/rms_norm.h"
#include "nn/norm/stats_sync.h"

namespace nl {

BatchNorm::BatchNorm(int64_t d, BatchNormConfig cfg, DType dtype) : MaskedNorm("BatchNorm"), dim(d), cfg_(cfg) {
  if (d < 1) throw std::invalid_argument("BatchNorm: d must be >= 1, got " + std::to_string(d));
  if (!(cfg.eps >= 0)) throw std::invalid_argument("BatchNorm: eps must be >= 0, got " + std::to_string(cfg.eps));
  if (!(cfg.momentum >= 0 && cfg.momentum <= 1))
    throw std::invalid_argument("BatchNorm: momentum must be in [0, 1] (torch convention: the weight of the new "
                                "batch), got " + std::to_string(cfg.momentum));
  register_affine(*this, d, cfg.affine, dtype, weight, bias);
  register_buffer("running_mean", Tensor::zeros({d}, dtype));
  register_buffer("running_var", Tensor::ones({d}, dtype));
  register_buffer("num_batches_tracked", Tensor::scalar(0, DType::Int64));
}

Variable BatchNorm::forward_masked(const Variable& x_in, const Tensor& pad_mask) {
  const Variable x = autocast(x_in, AutocastOp::Norm);  // statistics in float32 under autocast
  const std::string who = "BatchNorm(" + std::to_string(dim) + ")";
  Rows r = to_rows(x, dim, who);
  KeptRows k = keep_weights(pad_mask, r, x.dtype(), who);
  Variable h = cfg_.released ? group_scale(r.rows, 1) : r.rows;  // LayerScaling1D in the released code
  const int64_t R = h.size(0);
  Variable y;
  if (is_training()) {
    k = synced_rows(std::move(k));  // --sync-batch-stats: kept rows of every replica (stats_sync.h)
    if (k.host_count >= 0 && k.host_count < 2)  // checked where the count is known without a device read
      throw std::invalid_argument(who + ": training needs more than one non-padding row per batch to estimate a "
                                        "variance, got " + std::to_string(k.host_count) + "; use a larger batch or eval()");
    Variable mu = kept_mean(h, k);  // [1, d]
    Variable c = sub(h, mu);
    Variable var;   // the variance the forward divides by
    Tensor unbias;  // running_var takes var * unbias (0-d float64, on the device)
    if (cfg_.released) {
      c = mul(c, Variable(k.w));  // pad rows := mu, so their deviation is 0
      const int64_t rows = synced_count(R);
      var = affine(synced_sum(sum(square(c), {0}, true)), 1.0 / (double)rows, 0.0);
      unbias = Tensor::scalar((double)rows / (double)(rows - 1), DType::Float64, x.device());
    } else {
      var = kept_mean(square(c), k);
      unbias = div(k.count, affine(k.count, 1.0, -1.0));  // n / (n - 1)
    }
    y = div(c, sqrt(affine(var, 1.0, cfg_.eps)));
    if (has_batch_stats_hooks())
      run_batch_stats_hooks({mu, var, buffer("running_mean").clone(), buffer("running_var").clone()});
    NoGradGuard ng;
    const double m = cfg_.momentum;
    Tensor rm = buffer("running_mean"), rv = buffer("running_var");
    rm.copy_(add(affine(rm, 1.0 - m, 0.0), affine(mu.data().reshape({dim}).to(rm.dtype()), m, 0.0)));
    // affine(v, m * unbias, 0) with the factor on the device: m * unbias in float64, rounded to rv's dtype
    const Tensor factor = affine(unbias, m, 0.0).to(rv.dtype());
    rv.copy_(add(affine(rv, 1.0 - m, 0.0), mul(var.data().reshape({dim}).to(rv.dtype()), factor)));
    Tensor nb = buffer("num_batches_tracked");
    binary_into(BinaryOp::Add, nb, nb, Tensor::scalar(1, DType::Int64, nb.device()));
  } else {
    const Tensor rm = buffer("running_mean").to(x.dtype()), rv = buffer("running_var").to(x.dtype());
    y = div(sub(h, Variable(rm)), Variable(sqrt(affine(rv, 1.0, cfg_.eps))));
  }
  return from_rows(apply_affine(y, weight, bias), r);
}

std::string BatchNorm::extra_repr() const {
  std::ostringstream o;
  o << dim << ", momentum=" << cfg_.momentum << ", eps=" << cfg_.eps << ", affine=" << (cfg_.affine ? "true" : "false")
    << (cfg_.released ? ", released (MaskSyncBatchNorm)" : "");
  return o.str();
}

std::shared_ptr<Module> make_batch_norm(int64_t d, const NormOptions& o) {
  const DType dtype = o.dtype();
  BatchNormConfig c = o.with_common(BatchNormConfig{});
  c.released = o.get<bool>("released", false);
  c.momentum = o.get<double>("momentum", c.released ? 0.05 : 0.1);
  return std::make_shared<BatchNorm>(d, c, dtype);
}

}  // namespace nl
