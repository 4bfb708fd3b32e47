#include <stdexcept>

#include "tensor/ops.h"

namespace nl {

Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
  if (xs.empty()) throw std::invalid_argument("cat: no tensors given");
  const int nd = xs[0].dim();
  const int d = wrap_dim(dim, nd, "cat");
  Shape s = xs[0].shape();
  int64_t total = 0;
  for (const auto& x : xs) {
    check_same(xs[0], x, "cat");
    if (x.dim() != nd) throw std::invalid_argument("cat: tensors have different numbers of dims");
    for (int i = 0; i < nd; ++i)
      if (i != d && x.size(i) != s[i])
        throw std::invalid_argument("cat: shape " + shape_str(x.shape()) + " does not match " + shape_str(s) +
                                    " outside dim " + std::to_string(d));
    total += x.size(d);
  }
  s[d] = total;
  Tensor out = Tensor::empty(s, xs[0].dtype(), xs[0].device());
  int64_t at = 0;
  for (const auto& x : xs) {
    Tensor dst = out.slice(d, at, at + x.size(d));
    backend_for(x.device().type).copy(dst.desc(), x.desc());
    at += x.size(d);
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  if (xs.empty()) throw std::invalid_argument("stack: no tensors given");
  std::vector<Tensor> u;
  const int d = wrap_dim(dim, xs[0].dim() + 1, "stack");
  for (const auto& x : xs) u.push_back(x.unsqueeze(d));
  return cat(u, d);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  if (index.dtype() != DType::Int64 || index.dim() != 1)
    throw std::invalid_argument("index_select: index must be a 1-d int64 tensor, got " + dtype_name(index.dtype()) +
                                " " + shape_str(index.shape()));
  check_same_device(x, index, "index_select");
  const int d = wrap_dim(dim, x.dim(), "index_select");
  Tensor xt = x.transpose(0, d).contiguous();
  Shape s = xt.shape();
  s[0] = index.numel();
  Tensor out = Tensor::empty(s, x.dtype(), x.device());
  backend_for(x.device().type).index_select_rows(out.desc(), xt.desc(), index.contiguous().desc());
  return out.transpose(0, d).contiguous();
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  if (index.dtype() != DType::Int64 || index.dim() != x.dim())
    throw std::invalid_argument("gather: index must be int64 with " + std::to_string(x.dim()) + " dims, got " +
                                dtype_name(index.dtype()) + " " + shape_str(index.shape()));
  check_same_device(x, index, "gather");
  const int d = wrap_dim(dim, x.dim(), "gather");
  for (int i = 0; i < x.dim(); ++i)
    if (i != d && index.size(i) != x.size(i))
      throw std::invalid_argument("gather: index " + shape_str(index.shape()) + " must match input " +
                                  shape_str(x.shape()) + " outside dim " + std::to_string(d));
  Tensor xt = x.transpose(d, -1).contiguous(), it = index.transpose(d, -1).contiguous();
  Tensor out = Tensor::empty(it.shape(), x.dtype(), x.device());
  backend_for(x.device().type).gather_rows(out.desc(), xt.desc(), it.desc());
  return out.transpose(d, -1).contiguous();
}

Tensor embedding(const Tensor& table, const Tensor& ids) {
  if (table.dim() != 2) throw std::invalid_argument("embedding: table must be [V, D], got " + shape_str(table.shape()));
  if (ids.dtype() != DType::Int64) throw std::invalid_argument("embedding: ids must be int64");
  check_same_device(table, ids, "embedding");
  Shape s = ids.shape();
  s.push_back(table.size(1));
  Tensor out = Tensor::empty(s, table.dtype(), table.device());
  backend_for(table.device().type).index_select_rows(out.desc(), table.contiguous().desc(), ids.contiguous().desc());
  return out;
}

namespace {
// softmax (log = false) and log_softmax (log = true) along `dim`: the dim is moved last for the kernel.
Tensor softmax_along(const Tensor& x, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  check_floating(x, name);
  const int d = wrap_dim(dim, x.dim(), name);
  if (x.numel() == 0) return Tensor::empty(x.shape(), x.dtype(), x.device());  // PyTorch: empty in, empty out
  Tensor xt = (d == x.dim() - 1 ? x : x.transpose(d, -1)).contiguous();
  Tensor out = Tensor::empty(xt.shape(), x.dtype(), x.device());
  backend_for(x.device().type).fused().softmax(out.desc(), xt.desc(), log);
  return d == x.dim() - 1 ? out : out.transpose(d, -1).contiguous();
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_along(x, dim, false); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_along(x, dim, true); }

}  // namespace nl
