// softmax / log_softmax, fused cross-entropy with label smoothing and ignore_index, and dropout.
#include <memory>
#include <stdexcept>

#include "autograd/functions.h"
#include "tensor/ops_nn.h"

namespace nl {
namespace {
Variable softmax_impl(const Variable& x_in, int64_t dim, bool log) {
  const Variable x = autocast(x_in, AutocastOp::Softmax);  // float32 under autocast
  const int d = wrap_dim(dim, x.dim(), "softmax");
  Tensor y = log ? nl::log_softmax(x.data(), d) : nl::softmax(x.data(), d);
  return make_result(y, log ? "LogSoftmax" : "Softmax", {x},
                     [y, d, log](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::softmax_backward(y, g, d, log)};
                     },
                     {saved(y, "output")});
}
}  // namespace

Variable softmax(const Variable& x, int64_t dim) { return softmax_impl(x, dim, false); }
Variable log_softmax(const Variable& x, int64_t dim) { return softmax_impl(x, dim, true); }

Variable cross_entropy(const Variable& logits_in, const Tensor& target, double eps, int64_t ignore_index) {
  // Under autocast, bfloat16 logits (a vocabulary projection's autocast_output) are read as they are with
  // float32 math, and get a bfloat16 gradient; float32 logits stay float32.
  const Variable logits = autocast(logits_in, AutocastOp::CrossEntropy);
  // The mean over the rows that are not ignored, counted where the batch is (no host round trip): the
  // divisor max(valid, 1) in float64, as a host count would give it, so the loss and its gradient keep
  // the bits of loss_sum * (1/denom) and g / denom computed in double.
  const Device dev = target.device();
  Tensor valid = nl::sum(nl::ne(target, Tensor::scalar((double)ignore_index, DType::Int64, dev)));
  Tensor denom = nl::clamp_min(valid.to(DType::Float64), 1.0);
  // bfloat16 logits on the CPU that will get a gradient: the forward also writes the gradient of the usual
  // backward (dL/dloss = 1, so gloss = 1 / denom on every row) from the exponentials it computes anyway;
  // the backward hands it over when dL/dloss is 1 and recomputes otherwise (e.g. a loss scaled for
  // gradient accumulation), so every gradient has the recomputed one's bits.
  const bool ahead = logits.dtype() == DType::BFloat16 && logits.requires_grad() && grad_enabled() &&
                     logits.data().device().is_cpu() && dev.is_cpu();
  CrossEntropyRows rows = cross_entropy_rows(logits.data(), target, ignore_index, eps,
                                             ahead ? std::optional<double>(1.0 / denom.item()) : std::nullopt);
  const DType dt = rows.loss.dtype();
  Tensor out = nl::mul(nl::sum(rows.loss), nl::reciprocal(denom).to(dt));
  // Saved: the logits and two numbers per row, not the [N, C] probabilities (the backward recomputes them).
  Tensor x = logits.data(), stats = rows.stats, td = target.contiguous();
  auto ready = std::make_shared<Tensor>(rows.grad);  // the gradient for dL/dloss = 1, used at most once
  const int64_t N = x.size(0);
  std::vector<SavedTensor> kept{saved(x, "logits"), saved(stats, "softmax row statistics"), saved(td, "target"),
                                saved(denom, "valid rows")};
  if (rows.grad.defined()) kept.push_back(saved(rows.grad, "gradient for dL/dloss = 1 (from the forward)"));
  return make_result(out, "CrossEntropy", {logits},
                     [x, stats, td, denom, ignore_index, eps, N, dt, ready](const Tensor& g, const std::vector<bool>&) {
                       if (ready->defined() && g.item() == 1.0) {
                         Tensor r = std::move(*ready);
                         *ready = Tensor();
                         return std::vector<Tensor>{r};
                       }
                       Tensor gl = nl::div(g.to(DType::Float64), denom).to(dt).expand({N});
                       return std::vector<Tensor>{cross_entropy_backward(gl, x, stats, td, ignore_index, eps)};
                     },
                     std::move(kept), "label_smoothing=" + note_number(eps));
}

Variable dropout(const Variable& x, double p, bool training) {
  if (p < 0 || p >= 1) throw std::invalid_argument("dropout: p must be in [0, 1), got " + std::to_string(p));
  if (!training || p == 0) return x;
  // The keep mask is a pure function of (seed, offset + i) (nl::dropout on tensors): backward regenerates
  // it, so the graph keeps no mask tensor (PyTorch keeps a bool mask per dropout site).
  const auto [seed, offset] = next_random_offset((uint64_t)x.data().numel());
  return make_result(nl::dropout(x.data(), p, seed, offset), "Dropout", {x},
                     [p, seed = seed, offset = offset](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::dropout(g, p, seed, offset)};
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
  const auto [seed, offset] = next_random_offset((uint64_t)x.data().numel());  // as dropout(x) draws them
  return make_result(nl::dropout_add(residual.data(), x.data(), p, seed, offset), "DropoutAdd", {residual, x},
                     [p, seed = seed, offset = offset](const Tensor& g, const std::vector<bool>& needs) {
                       return std::vector<Tensor>{needs[0] ? g : Tensor(),
                                                  needs[1] ? nl::dropout(g, p, seed, offset) : Tensor()};
                     },
                     {}, "p=" + note_number(p));
}

}  // namespace nl
