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

CrossEntropyRows cross_entropy_rows(const Tensor& logits, const Tensor& target, int64_t ignore_index,
                                    double label_smoothing) {
  observe(AutocastOp::CrossEntropy, logits);
  const char* op = "cross_entropy";
  check_floating(logits, op);
  if (logits.dim() != 2)
    throw std::invalid_argument("cross_entropy: logits must be [N, C], got " + shape_str(logits.shape()) +
                                " (flatten the leading dims first)");
  check_targets(op, target, logits.size(0), logits);
  check_smoothing(op, label_smoothing);
  Tensor x = logits.contiguous(), t = target.contiguous();
  CrossEntropyRows r{Tensor::empty({x.size(0)}, x.dtype(), x.device()), Tensor::empty(x.shape(), x.dtype(), x.device())};
  fused_for(x).cross_entropy(r.loss.desc(), r.prob.desc(), x.desc(), t.desc(), ignore_index, label_smoothing);
  return r;
}

Tensor cross_entropy_backward(const Tensor& gloss, const Tensor& prob, const Tensor& target, int64_t ignore_index,
                              double label_smoothing) {
  observe(AutocastOp::CrossEntropy, prob);
  const char* op = "cross_entropy_backward";
  check_floating(prob, op);
  check_same(gloss, prob, op);
  if (prob.dim() != 2 || gloss.shape() != Shape{prob.size(0)})
    throw std::invalid_argument("cross_entropy_backward: need prob [N, C] and gloss [N], got " +
                                shape_str(prob.shape()) + " and " + shape_str(gloss.shape()));
  check_targets(op, target, prob.size(0), prob);
  check_smoothing(op, label_smoothing);
  Tensor gx = Tensor::empty(prob.shape(), prob.dtype(), prob.device());
  Tensor p = prob.contiguous(), gl = gloss.contiguous(), t = target.contiguous();
  fused_for(p).cross_entropy_backward(gx.desc(), gl.desc(), p.desc(), t.desc(), ignore_index, label_smoothing);
  return gx;
}

}  // namespace nl
