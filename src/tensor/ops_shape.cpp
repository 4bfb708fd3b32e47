#include <algorithm>
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
// Throws std::invalid_argument naming `op` unless dst, index and src are contiguous, index is int64 and
// src has dst's dtype and device.
void check_scatter(const char* op, const Tensor& dst, const Tensor& index, const Tensor& src) {
  check_same(dst, src, op);
  check_same_device(dst, index, op);
  if (index.dtype() != DType::Int64)
    throw std::invalid_argument(std::string(op) + ": index must be int64, got " + dtype_name(index.dtype()));
  if (!dst.is_contiguous() || !index.is_contiguous() || !src.is_contiguous() || dst.dim() < 1)
    throw std::invalid_argument(std::string(op) + ": needs contiguous tensors (call .contiguous())");
}
}  // namespace

void index_add_rows_(Tensor& table, const Tensor& index, const Tensor& src) {
  check_scatter("index_add_rows", table, index, src);
  const int64_t V = table.size(0), D = V ? table.numel() / V : 0;
  if (src.numel() != index.numel() * D)
    throw std::invalid_argument("index_add_rows: src " + shape_str(src.shape()) + " should hold " +
                                std::to_string(index.numel()) + " rows of " + std::to_string(D) + " for table " +
                                shape_str(table.shape()));
  backend_for(table.device().type).index_add_rows(table.desc(), index.desc(), src.desc());
  table.bump_version();
}

void scatter_add_rows_(Tensor& dst, const Tensor& index, const Tensor& src) {
  check_scatter("scatter_add_rows", dst, index, src);
  if (src.shape() != index.shape() || index.dim() != dst.dim() ||
      !std::equal(dst.shape().begin(), dst.shape().end() - 1, index.shape().begin()))
    throw std::invalid_argument("scatter_add_rows: index " + shape_str(index.shape()) + " and src " +
                                shape_str(src.shape()) + " do not match the rows of " + shape_str(dst.shape()));
  backend_for(dst.device().type).scatter_add_rows(dst.desc(), index.desc(), src.desc());
  dst.bump_version();
}

}  // namespace nl
