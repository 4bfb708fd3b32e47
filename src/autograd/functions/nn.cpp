// softmax / log_softmax, fused cross-entropy with label smoothing and ignore_index, and dropout.
#include <stdexcept>

#include "autograd/functions.h"

namespace nl {
namespace {
Variable softmax_impl(const Variable& x, int64_t dim, bool log) {
  const int d = wrap_dim(dim, x.dim(), "softmax");
  const bool last = d == x.dim() - 1;
  Tensor y = log ? nl::log_softmax(x.data(), d) : nl::softmax(x.data(), d);
  return make_result(y, log ? "LogSoftmax" : "Softmax", {x},
                     [y, d, last, log](const Tensor& g, const std::vector<bool>&) {
                       Tensor yt = last ? y : y.transpose(d, -1).contiguous();
                       Tensor gt = (last ? g : g.transpose(d, -1)).contiguous();
                       Tensor gi = Tensor::empty(yt.shape(), y.dtype(), y.device());
                       backend_for(y.device().type).fused().softmax_backward(gi.desc(), gt.desc(), yt.desc(), log);
                       return std::vector<Tensor>{last ? gi : gi.transpose(d, -1).contiguous()};
                     },
                     {saved(y, "output")});
}
}  // namespace

Variable softmax(const Variable& x, int64_t dim) { return softmax_impl(x, dim, false); }
Variable log_softmax(const Variable& x, int64_t dim) { return softmax_impl(x, dim, true); }

Variable cross_entropy(const Variable& logits, const Tensor& target, double eps, int64_t ignore_index) {
  if (logits.dim() != 2)
    throw std::invalid_argument("cross_entropy: logits must be [N, C], got " + shape_str(logits.shape()) +
                                " (flatten the leading dims first)");
  if (target.dtype() != DType::Int64 || target.dim() != 1 || target.size(0) != logits.size(0))
    throw std::invalid_argument("cross_entropy: target must be int64 [" + std::to_string(logits.size(0)) + "], got " +
                                dtype_name(target.dtype()) + " " + shape_str(target.shape()));
  if (eps < 0 || eps >= 1) throw std::invalid_argument("cross_entropy: label_smoothing must be in [0, 1)");
  Tensor x = logits.data().contiguous(), t = target.contiguous().to(Device::cpu());
  const int64_t N = x.size(0);
  Tensor loss = Tensor::empty({N}, x.dtype(), x.device());
  Tensor prob = Tensor::empty(x.shape(), x.dtype(), x.device());
  Tensor td = target.contiguous().to(x.device());  // targets may come from the host
  backend_for(x.device().type).fused().cross_entropy(loss.desc(), prob.desc(), x.desc(), td.desc(), ignore_index, eps);
  int64_t valid = 0;
  const int64_t* tp = t.data<int64_t>();
  for (int64_t i = 0; i < N; ++i) valid += tp[i] != ignore_index;
  const double denom = valid ? (double)valid : 1.0;
  Tensor out = nl::affine(nl::sum(loss), 1.0 / denom, 0.0);
  return make_result(out, "CrossEntropy", {logits},
                     [prob, td, ignore_index, eps, denom, N](const Tensor& g, const std::vector<bool>&) {
                       Tensor gl = Tensor::full({N}, g.item() / denom, prob.dtype(), prob.device());
                       Tensor gx = Tensor::empty(prob.shape(), prob.dtype(), prob.device());
                       backend_for(prob.device().type)
                           .fused().cross_entropy_backward(gx.desc(), gl.desc(), prob.desc(), td.desc(), ignore_index, eps);
                       return std::vector<Tensor>{gx};
                     },
                     {saved(prob, "softmax probabilities"), saved(td, "target")},
                     "label_smoothing=" + note_number(eps));
}

Variable dropout(const Variable& x, double p, bool training) {
  if (p < 0 || p >= 1) throw std::invalid_argument("dropout: p must be in [0, 1), got " + std::to_string(p));
  if (!training || p == 0) return x;
  // The keep mask is a pure function of (seed, offset + i) (Backend::dropout): backward regenerates it,
  // so the graph keeps no mask tensor (PyTorch keeps a bool mask per dropout site).
  Tensor in = x.data().contiguous();
  const auto [seed, offset] = next_random_offset((uint64_t)in.numel());
  Tensor out = Tensor::empty(in.shape(), in.dtype(), in.device());
  backend_for(in.device().type).fused().dropout(out.desc(), in.desc(), p, seed, offset);
  return make_result(out, "Dropout", {x},
                     [p, seed = seed, offset = offset](const Tensor& g, const std::vector<bool>&) {
                       Tensor gc = g.contiguous();
                       Tensor gx = Tensor::empty(gc.shape(), gc.dtype(), gc.device());
                       backend_for(gc.device().type).fused().dropout(gx.desc(), gc.desc(), p, seed, offset);
                       return std::vector<Tensor>{gx};
                     },
                     {}, "p=" + note_number(p));
}

Variable dropout_add(const Variable& residual, const Variable& x, double p, bool training) {
  if (p < 0 || p >= 1) throw std::invalid_argument("dropout_add: p must be in [0, 1), got " + std::to_string(p));
  if (residual.shape() != x.shape() || residual.dtype() != x.dtype())
    throw std::invalid_argument("dropout_add: residual " + shape_str(residual.shape()) + " " +
                                dtype_name(residual.dtype()) + " and input " + shape_str(x.shape()) + " " +
                                dtype_name(x.dtype()) + " must have one shape and dtype");
  if (!training || p == 0) return residual + x;
  Tensor in = x.data().contiguous(), r = residual.data().contiguous();
  const auto [seed, offset] = next_random_offset((uint64_t)in.numel());  // as dropout(x) draws them
  Tensor out = Tensor::empty(in.shape(), in.dtype(), in.device());
  backend_for(in.device().type).fused().dropout_add(out.desc(), r.desc(), in.desc(), p, seed, offset);
  return make_result(out, "DropoutAdd", {residual, x},
                     [p, seed = seed, offset = offset](const Tensor& g, const std::vector<bool>& needs) {
                       Tensor gx;
                       if (needs[1]) {
                         Tensor gc = g.contiguous();
                         gx = Tensor::empty(gc.shape(), gc.dtype(), gc.device());
                         backend_for(gc.device().type).fused().dropout(gx.desc(), gc.desc(), p, seed, offset);
                       }
                       return std::vector<Tensor>{needs[0] ? g : Tensor(), gx};
                     },
                     {}, "p=" + note_number(p));
}

}  // namespace nl
