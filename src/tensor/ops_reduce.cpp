#include <algorithm>
#include <stdexcept>

#include "tensor/autocast.h"
#include "tensor/ops.h"

namespace nl {

namespace {
std::vector<int> normalize_dims(const std::vector<int64_t>& dims, int ndim, const char* op) {
  std::vector<int> out;
  if (dims.empty()) {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (auto d : dims) {
    int w = wrap_dim(d, ndim, op);
    if (std::find(out.begin(), out.end(), w) != out.end())
      throw std::invalid_argument(std::string(op) + ": dim " + std::to_string(d) + " listed twice");
    out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  const char* name = op == ReduceOp::Sum ? "sum" : op == ReduceOp::Mean ? "mean" : op == ReduceOp::Max ? "max"
                     : op == ReduceOp::Min ? "min" : "argmax";
  if (x.defined() && is_floating(x.dtype())) autocast_observe(AutocastOp::Reduction, x.dtype());
  const int nd = x.dim();
  std::vector<int> red = normalize_dims(dims, nd, name);
  std::vector<int64_t> perm;
  Shape out_shape, kept_shape;
  for (int i = 0; i < nd; ++i)
    if (!std::binary_search(red.begin(), red.end(), i)) {
      perm.push_back(i);
      out_shape.push_back(x.size(i));
      kept_shape.push_back(x.size(i));
    } else {
      kept_shape.push_back(1);
    }
  for (int r : red) perm.push_back(r);
  Tensor xp = nd ? x.permute(perm) : x;
  DType odt = op == ReduceOp::ArgMax ? DType::Int64 : x.dtype();
  Tensor out = Tensor::empty(out_shape, odt, x.device());
  backend_for(x.device().type).reduce(op, out.desc(), xp.desc(), (int)red.size());
  return keepdim ? out.view(kept_shape) : out;
}

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(ReduceOp::Sum, x, dims, keepdim);
}
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(ReduceOp::Mean, x, dims, keepdim);
}
Tensor max(const Tensor& x, int64_t dim, bool keepdim) { return reduce(ReduceOp::Max, x, {dim}, keepdim); }
Tensor min(const Tensor& x, int64_t dim, bool keepdim) { return reduce(ReduceOp::Min, x, {dim}, keepdim); }
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return reduce(ReduceOp::ArgMax, x, {dim}, keepdim); }

Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  std::vector<int> red = normalize_dims(dims, x.dim(), "var");
  int64_t n = 1;
  for (int d : red) n *= x.size(d);
  if (n - correction <= 0)
    throw std::invalid_argument("var: " + std::to_string(n) + " elements with correction " +
                                std::to_string(correction) + " leaves no degrees of freedom");
  Tensor c = x - mean(x, dims, true);
  return sum(square(c), dims, keepdim) / (double)(n - correction);
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const int lead = x.dim() - (int)shape.size();
  if (lead < 0) throw std::invalid_argument("sum_to: cannot reduce " + shape_str(x.shape()) + " to " + shape_str(shape));
  std::vector<int64_t> dims;
  for (int i = 0; i < x.dim(); ++i)
    if (i < lead || (shape[i - lead] == 1 && x.size(i) != 1)) dims.push_back(i);
  if (dims.empty()) return x.reshape(shape);
  return sum(x, dims, true).reshape(shape);
}

Tensor sum_rows(const Tensor& m) {
  if (m.dim() != 2) throw std::invalid_argument("sum_rows: expects a matrix [R, C], got " + shape_str(m.shape()));
  if (m.dtype() != DType::BFloat16) return sum(m, {0});
  Tensor out = Tensor::empty({m.size(1)}, DType::Float32, m.device());
  backend_for(m.device().type).reduce(ReduceOp::Sum, out.desc(), m.transpose(0, 1).desc(), 1);
  return out;
}

}  // namespace nl
