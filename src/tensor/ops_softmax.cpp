// Front end of the softmax family: softmax / log_softmax with their backward, and the fused
// cross-entropy (tensor/ops_nn.h). Every entry checks once and dispatches to the device's fused kernels.
#include <stdexcept>
#include <string>

#include "tensor/fused_dispatch.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"

namespace nl {

namespace {
// softmax (log = false) and log_softmax (log = true) along `dim`: the dim is moved last for the kernel.
Tensor softmax_along(const Tensor& x, int64_t dim, bool log) {
  observe(AutocastOp::Softmax, x);
  const char* name = log ? "log_softmax" : "softmax";
  check_floating(x, name);
  const int d = wrap_dim(dim, x.dim(), name);
  if (x.numel() == 0) return Tensor::empty(x.shape(), x.dtype(), x.device());  // PyTorch: empty in, empty out
  const bool last = d == x.dim() - 1;
  Tensor xt = (last ? x : x.transpose(d, -1)).contiguous();
  Tensor out = Tensor::empty(xt.shape(), x.dtype(), x.device());
  fused_for(x).softmax(out.desc(), xt.desc(), log);
  return last ? out : out.transpose(d, -1).contiguous();
}

void check_targets(const char* op, const Tensor& target, int64_t N, const Tensor& like) {
  if (!target.defined() || target.dtype() != DType::Int64 || target.dim() != 1 || target.size(0) != N)
    throw std::invalid_argument(std::string(op) + ": target must be int64 [" + std::to_string(N) + "], got " +
                                (target.defined() ? dtype_name(target.dtype()) + " " + shape_str(target.shape())
                                                  : std::string("undefined")));
  if (target.device() != like.device())
    throw std::invalid_argument(std::string(op) + ": target is on " + target.device().str() + " but the logits on " +
                                like.device().str() + "; move the batch to the model's device (.to(device))");
}

void check_smoothing(const char* op, double eps) {
  if (!(eps >= 0 && eps < 1))
    throw std::invalid_argument(std::string(op) + ": label_smoothing must be in [0, 1), got " + std::to_string(eps));
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_along(x, dim, false); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_along(x, dim, true); }

Tensor softmax_backward(const Tensor& y, const Tensor& gy, int64_t dim, bool log) {
  observe(AutocastOp::Softmax, y);
  const char* name = log ? "log_softmax_backward" : "softmax_backward";
  check_floating(y, name);
  check_same(y, gy, name);
  if (y.shape() != gy.shape())
    throw std::invalid_argument(std::string(name) + ": output " + shape_str(y.shape()) + " and gradient " +
                                shape_str(gy.shape()) + " differ");
  const int d = wrap_dim(dim, y.dim(), name);
  if (y.numel() == 0) return Tensor::empty(y.shape(), y.dtype(), y.device());
  const bool last = d == y.dim() - 1;
  Tensor yt = last ? y.contiguous() : y.transpose(d, -1).contiguous();
  Tensor gt = (last ? gy : gy.transpose(d, -1)).contiguous();
  Tensor gi = Tensor::empty(yt.shape(), y.dtype(), y.device());
  fused_for(y).softmax_backward(gi.desc(), gt.desc(), yt.desc(), log);
  return last ? gi : gi.transpose(d, -1).contiguous();
}

namespace {
// The dtype the cross-entropy computes in for these logits: float32 for bfloat16 (read widened), else
// theirs (float32 or float64; others throw).
DType loss_dtype(const Tensor& logits, const char* op) {
  if (logits.defined() && logits.dtype() == DType::BFloat16) return DType::Float32;
  check_floating(logits, op);
  return logits.dtype();
}
}  // namespace

CrossEntropyRows cross_entropy_rows(const Tensor& logits, const Tensor& target, int64_t ignore_index,
                                    double label_smoothing, std::optional<double> grad_scale) {
  observe(AutocastOp::CrossEntropy, logits);
  const char* op = "cross_entropy";
  const DType ft = loss_dtype(logits, op);
  if (logits.dim() != 2)
    throw std::invalid_argument("cross_entropy: logits must be [N, C], got " + shape_str(logits.shape()) +
                                " (flatten the leading dims first)");
  check_targets(op, target, logits.size(0), logits);
  check_smoothing(op, label_smoothing);
  Tensor x = logits.contiguous(), t = target.contiguous();
  CrossEntropyRows r{Tensor::empty({x.size(0)}, ft, x.device()), Tensor::empty({x.size(0), 2}, ft, x.device()),
                     grad_scale ? Tensor::empty(x.shape(), x.dtype(), x.device()) : Tensor()};
  fused_for(x).cross_entropy(r.loss.desc(), r.stats.desc(), x.desc(), t.desc(), ignore_index, label_smoothing,
                             r.grad.defined() ? r.grad.desc() : Desc{}, grad_scale.value_or(0.0));
  return r;
}

Tensor cross_entropy_backward(const Tensor& gloss, const Tensor& logits, const Tensor& stats, const Tensor& target,
                              int64_t ignore_index, double label_smoothing) {
  observe(AutocastOp::CrossEntropy, logits);
  const char* op = "cross_entropy_backward";
  const DType ft = loss_dtype(logits, op);
  if (logits.dim() != 2 || gloss.shape() != Shape{logits.size(0)} || stats.shape() != Shape{logits.size(0), 2})
    throw std::invalid_argument("cross_entropy_backward: need logits [N, C], gloss [N] and stats [N, 2], got " +
                                shape_str(logits.shape()) + ", " + shape_str(gloss.shape()) + " and " +
                                shape_str(stats.shape()));
  if (gloss.dtype() != ft || stats.dtype() != ft)
    throw std::invalid_argument(std::string(op) + ": gloss and stats must be " + dtype_name(ft) + " for " +
                                dtype_name(logits.dtype()) + " logits, got " + dtype_name(gloss.dtype()) + " and " +
                                dtype_name(stats.dtype()));
  check_same_device(gloss, logits, op);
  check_same_device(stats, logits, op);
  check_targets(op, target, logits.size(0), logits);
  check_smoothing(op, label_smoothing);
  Tensor gx = Tensor::empty(logits.shape(), logits.dtype(), logits.device());
  Tensor x = logits.contiguous(), st = stats.contiguous(), gl = gloss.contiguous(), t = target.contiguous();
  fused_for(x).cross_entropy_backward(gx.desc(), gl.desc(), x.desc(), st.desc(), t.desc(), ignore_index,
                                      label_smoothing);
  return gx;
}

}  // namespace nl
