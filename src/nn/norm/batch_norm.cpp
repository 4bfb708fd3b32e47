// BatchNorm with padding masks and the released MaskSyncBatchNorm; equations in batch_norm.h.
#include "nn/norm/batch_norm.h"

#include <sstream>
#include <stdexcept>

#include "autograd/functions.h"
#include "nn/norm/group_norm.h"
#include "nn/norm/rms_norm.h"
#include "nn/norm/stats_sync.h"

namespace nl {

namespace {
// max(v, lo) with torch.clamp's gradient: passed where v >= lo, 0 below.
Variable clamp_min_var(const Variable& v, double lo) {
  const Tensor keep = ge(v.data(), Tensor::full(v.shape(), lo, v.dtype(), v.device()));
  return where(keep, v, Variable(Tensor::full(v.shape(), lo, v.dtype(), v.device())));
}
}  // namespace

std::string batch_norm_reading_name(BatchNormReading r) {
  switch (r) {
    case BatchNormReading::Paper: return "paper";
    case BatchNormReading::Sync: return "sync";
    case BatchNormReading::Mask: return "mask";
  }
  return "?";
}

BatchNormReading parse_batch_norm_reading(const std::string& s) {
  for (auto r : {BatchNormReading::Paper, BatchNormReading::Sync, BatchNormReading::Mask})
    if (batch_norm_reading_name(r) == s) return r;
  throw std::invalid_argument("batchnorm: reading must be 'paper', 'sync' (the released MaskSyncBatchNorm) or 'mask' "
                              "(the released MaskBatchNorm), got '" + s + "'");
}

BatchNorm::BatchNorm(int64_t d, BatchNormConfig cfg, DType dtype) : MaskedNorm("BatchNorm"), dim(d), cfg_(cfg) {
  if (d < 1) throw std::invalid_argument("BatchNorm: d must be >= 1, got " + std::to_string(d));
  if (!(cfg.eps >= 0)) throw std::invalid_argument("BatchNorm: eps must be >= 0, got " + std::to_string(cfg.eps));
  if (!(cfg.momentum >= 0 && cfg.momentum <= 1))
    throw std::invalid_argument("BatchNorm: momentum must be in [0, 1] (torch convention: the weight of the new "
                                "batch), got " + std::to_string(cfg.momentum));
  register_affine(*this, d, cfg.affine, dtype, weight, bias);
  if (cfg.affine && cfg.reading == BatchNormReading::Mask) {  // MaskBatchNorm: init.uniform_(weight)
    NoGradGuard ng;
    weight.set_data(Tensor::rand({d}, 0.0, 1.0, dtype));
  }
  register_buffer("running_mean", Tensor::zeros({d}, dtype));
  register_buffer("running_var", Tensor::ones({d}, dtype));
  register_buffer("num_batches_tracked", Tensor::scalar(0, DType::Int64));
}

void BatchNorm::update_running(const Tensor& mu, const Tensor& var, const Tensor& unbias) {
  NoGradGuard ng;
  const double m = cfg_.momentum;
  Tensor rm = buffer("running_mean"), rv = buffer("running_var");
  rm.copy_(add(affine(rm, 1.0 - m, 0.0), affine(mu.reshape({dim}).to(rm.dtype()), m, 0.0)));
  // affine(v, m * unbias, 0) with the factor on the device: m * unbias in float64, rounded to rv's dtype
  const Tensor factor = affine(unbias, m, 0.0).to(rv.dtype());
  rv.copy_(add(affine(rv, 1.0 - m, 0.0), mul(var.reshape({dim}).to(rv.dtype()), factor)));
  Tensor nb = buffer("num_batches_tracked");
  binary_into(BinaryOp::Add, nb, nb, Tensor::scalar(1, DType::Int64, nb.device()));
}

Variable BatchNorm::forward_masked(const Variable& x_in, const Tensor& pad_mask) {
  const Variable x = autocast(x_in, AutocastOp::Norm);  // statistics in float32 under autocast
  const std::string who = "BatchNorm(" + std::to_string(dim) + ")";
  if (is_training() && cfg_.reading == BatchNormReading::Paper && x.dim() == 4 && x.size(1) == dim &&
      !pad_mask.defined() && !batch_stats_synced() && !has_batch_stats_hooks()) {
    // Images in training, the paper's reading, statistics of this replica: one kernel over the NCHW layout,
    // the same function as the rows path below without its permutes (batch_norm_channels_fused).
    const int64_t count = x.size(0) * x.size(2) * x.size(3);
    if (count < 2)
      throw std::invalid_argument(who + ": training needs more than one value per channel to estimate a variance, "
                                        "got " + std::to_string(count) + "; use a larger batch or eval()");
    BatchNormStep st = batch_norm_channels_fused(x, cfg_.eps, weight, bias);
    update_running(st.mean, st.var, Tensor::scalar((double)count / (double)(count - 1), DType::Float64, x.device()));
    return st.y;
  }
  Rows r = to_rows(x, dim, who);
  KeptRows k = keep_weights(pad_mask, r, x.dtype(), who);
  const bool sync = cfg_.reading == BatchNormReading::Sync, mask = cfg_.reading == BatchNormReading::Mask;
  Variable h = sync ? group_scale(r.rows, 1) : r.rows;  // LayerScaling1D in MaskSyncBatchNorm
  const int64_t R = h.size(0);
  Variable y;
  if (is_training() || mask) {  // MaskBatchNorm normalises with the batch statistics in eval too
    if (is_training()) k = synced_rows(std::move(k));  // --sync-batch-stats: kept rows of every replica (stats_sync.h)
    if (k.host_count >= 0 && k.host_count < 2)  // checked where the count is known without a device read
      throw std::invalid_argument(who + ": training needs more than one non-padding row per batch to estimate a "
                                        "variance, got " + std::to_string(k.host_count) + "; use a larger batch or eval()");
    Variable mu = kept_mean(h, k);  // [1, d]
    Variable c = sub(h, mu);
    Variable var;   // the variance the forward divides by
    Tensor unbias;  // running_var takes var * unbias (0-d float64, on the device)
    if (sync) {
      c = mul(c, Variable(k.w));  // pad rows := mu, so their deviation is 0
      const int64_t rows = synced_count(R);
      var = affine(synced_sum(sum(square(c), {0}, true)), 1.0 / (double)rows, 0.0);
      unbias = Tensor::scalar((double)rows / (double)(rows - 1), DType::Float64, x.device());
    } else {
      var = kept_mean(square(c), k);
      unbias = div(k.count, affine(k.count, 1.0, -1.0));  // n / (n - 1)
    }
    // MaskBatchNorm: bias_var.clamp(eps) ** -0.5; the others: 1 / sqrt(var + eps)
    y = div(c, sqrt(mask ? clamp_min_var(var, cfg_.eps) : affine(var, 1.0, cfg_.eps)));
    if (is_training()) {
      if (has_batch_stats_hooks())
        run_batch_stats_hooks({mu, var, buffer("running_mean").clone(), buffer("running_var").clone()});
      update_running(mu.data(), var.data(), unbias);
    }
  } else {
    if (sync && pad_mask.defined()) {  // MaskSyncBatchNorm fills pad rows with the kept rows' mean in eval too
      const Variable mu = kept_mean(h, k);
      h = add(mul(h, Variable(k.w)), mul(mu, Variable(affine(k.w, -1.0, 1.0))));
    }
    const Tensor rm = buffer("running_mean").to(x.dtype()), rv = buffer("running_var").to(x.dtype());
    y = div(sub(h, Variable(rm)), Variable(sqrt(affine(rv, 1.0, cfg_.eps))));
  }
  return from_rows(apply_affine(y, weight, bias), r);
}

std::string BatchNorm::extra_repr() const {
  std::ostringstream o;
  o << dim << ", momentum=" << cfg_.momentum << ", eps=" << cfg_.eps << ", affine=" << (cfg_.affine ? "true" : "false")
    << (cfg_.reading == BatchNormReading::Sync   ? ", reading=sync (MaskSyncBatchNorm)"
        : cfg_.reading == BatchNormReading::Mask ? ", reading=mask (MaskBatchNorm)"
                                                 : "");
  return o.str();
}

std::shared_ptr<Module> make_batch_norm(int64_t d, const NormOptions& o) {
  const DType dtype = o.dtype();
  BatchNormConfig c = o.with_common(BatchNormConfig{});
  const bool released = o.get<bool>("released", false);
  c.reading = parse_batch_norm_reading(o.get<std::string>("reading", released ? "sync" : "paper"));
  if (released && c.reading != BatchNormReading::Sync)
    throw std::invalid_argument("make_norm(batchnorm): \"released\": true is reading 'sync', but \"reading\" is '" +
                                batch_norm_reading_name(c.reading) + "'; give one of them");
  c.momentum = o.get<double>("momentum", c.released() ? 0.05 : 0.1);
  return std::make_shared<BatchNorm>(d, c, dtype);
}

}  // namespace nl
