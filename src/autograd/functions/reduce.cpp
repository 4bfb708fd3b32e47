// Differentiable reductions. The gradient of a sum is the upstream gradient broadcast back over the
// reduced dims; a mean divides it by the count; max routes it to the arg-max.
#include <algorithm>

#include "autograd/functions.h"

namespace nl {
namespace {
// Shape of x with the reduced dims kept as 1 (what a keepdim reduction returns).
Shape kept_shape(const Shape& in, const std::vector<int64_t>& dims) {
  Shape s = in;
  if (dims.empty()) {
    std::fill(s.begin(), s.end(), 1);
    return s;
  }
  for (auto d : dims) s[wrap_dim(d, (int64_t)in.size(), "reduce")] = 1;
  return s;
}
}  // namespace

Variable sum(const Variable& x_in, const std::vector<int64_t>& dims, bool keepdim) {
  const Variable x = autocast(x_in, AutocastOp::Reduction);  // float32 under autocast
  Shape in = x.shape(), ks = kept_shape(in, dims);
  return make_result(nl::sum(x.data(), dims, keepdim), "Sum", {x},
                     [in, ks](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{g.reshape(ks).expand(in)};
                     });
}

Variable mean(const Variable& x_in, const std::vector<int64_t>& dims, bool keepdim) {
  const Variable x = autocast(x_in, AutocastOp::Reduction);  // float32 under autocast
  Shape in = x.shape(), ks = kept_shape(in, dims);
  const double n = (double)shape_numel(in) / (double)std::max<int64_t>(1, shape_numel(ks));
  return make_result(nl::mean(x.data(), dims, keepdim), "Mean", {x},
                     [in, ks, n](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::affine(g, 1.0 / n, 0.0).reshape(ks).expand(in)};
                     });
}

Variable var(const Variable& x_in, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  const Variable x = autocast(x_in, AutocastOp::Reduction);  // float32 under autocast
  // Composite on purpose: the gradient through the mean is part of what the LayerNorm papers study.
  int64_t n = shape_numel(x.shape()) / std::max<int64_t>(1, shape_numel(kept_shape(x.shape(), dims)));
  if (n - correction <= 0)
    throw std::invalid_argument("var: " + std::to_string(n) + " elements with correction " +
                                std::to_string(correction) + " leaves no degrees of freedom");
  Variable c = sub(x, mean(x, dims, true));
  return affine(sum(square(c), dims, keepdim), 1.0 / (double)(n - correction), 0.0);
}

Variable max(const Variable& x_in, int64_t dim, bool keepdim) {
  const Variable x = autocast(x_in, AutocastOp::Reduction);  // float32 under autocast
  const int d = wrap_dim(dim, x.dim(), "max");
  Tensor idx = nl::argmax(x.data(), d, true);
  Shape in = x.shape(), ks = kept_shape(in, {dim});
  return make_result(nl::max(x.data(), d, keepdim), "Max", {x},
                     [idx, in, ks, d](const Tensor& g, const std::vector<bool>&) {
                       Shape ar(in.size(), 1);
                       ar[d] = in[d];
                       Tensor pos = Tensor::arange(in[d], DType::Int64, g.device()).view(ar);
                       Tensor hit = nl::eq(pos.expand(in), idx.expand(in));
                       Tensor z = Tensor::zeros({}, g.dtype(), g.device());
                       return std::vector<Tensor>{nl::where(hit, g.reshape(ks).expand(in), z)};
                     },
                     {saved(idx, "arg-max indices")});
}

}  // namespace nl
