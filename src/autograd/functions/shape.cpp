// Differentiable views and indexing: the backward of a view maps the gradient back to the input's
// layout (reshape back, transpose back, zero-padded slice, sum over expanded dims, scatter-add).
#include "autograd/functions.h"

namespace nl {

Variable reshape(const Variable& x, const Shape& shape) {
  Shape in = x.shape();
  return make_result(x.data().reshape(shape), "Reshape", {x},
                     [in](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{g.reshape(in)}; },
                     {}, shape_str(shape));
}

Variable transpose(const Variable& x, int64_t d0, int64_t d1) {
  return make_result(x.data().transpose(d0, d1), "Transpose", {x},
                     [d0, d1](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{g.transpose(d0, d1)};
                     });
}

Variable permute(const Variable& x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> inv(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inv[wrap_dim(dims[i], (int64_t)dims.size(), "permute")] = (int64_t)i;
  return make_result(x.data().permute(dims), "Permute", {x},
                     [inv](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{g.permute(inv)}; });
}

Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Shape in = x.shape();
  DType dt = x.dtype();
  Device dev = x.device();
  return make_result(x.data().slice(dim, start, end, step), "Slice", {x},
                     [in, dt, dev, dim, start, end, step](const Tensor& g, const std::vector<bool>&) {
                       Tensor z = Tensor::zeros(in, dt, dev);
                       z.slice(dim, start, end, step).copy_(g);
                       return std::vector<Tensor>{z};
                     });
}

Variable expand(const Variable& x, const Shape& shape) {
  Shape in = x.shape();
  return make_result(x.data().expand(shape), "Expand", {x},
                     [in](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{sum_to(g, in)}; });
}

Variable unsqueeze(const Variable& x, int64_t dim) { return reshape(x, x.data().unsqueeze(dim).shape()); }
Variable squeeze(const Variable& x, int64_t dim) { return reshape(x, x.data().squeeze(dim).shape()); }
Variable flatten(const Variable& x, int64_t start, int64_t end) {
  return reshape(x, x.data().flatten(start, end).shape());
}

Variable contiguous(const Variable& x) {
  if (x.data().is_contiguous()) return x;
  return make_result(x.data().contiguous(), "Contiguous", {x},
                     [](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{g}; });
}

Variable cat(const std::vector<Variable>& xs, int64_t dim) {
  std::vector<Tensor> ts;
  std::vector<int64_t> sizes;
  for (auto& v : xs) {
    ts.push_back(v.data());
    sizes.push_back(v.data().size(dim));
  }
  return make_result(nl::cat(ts, dim), "Cat", xs,
                     [sizes, dim](const Tensor& g, const std::vector<bool>& n) {
                       std::vector<Tensor> r(sizes.size());
                       int64_t at = 0;
                       for (size_t i = 0; i < sizes.size(); ++i) {
                         if (n[i]) r[i] = g.slice(dim, at, at + sizes[i]);
                         at += sizes[i];
                       }
                       return r;
                     });
}

Variable stack(const std::vector<Variable>& xs, int64_t dim) {
  if (xs.empty()) throw std::invalid_argument("stack: no variables given");
  std::vector<Variable> u;
  for (auto& v : xs) u.push_back(unsqueeze(v, wrap_dim(dim, xs[0].dim() + 1, "stack")));
  return cat(u, dim);
}

Variable index_select(const Variable& x, int64_t dim, const Tensor& index) {
  Shape in = x.shape();
  const int d = wrap_dim(dim, x.dim(), "index_select");
  Tensor idx = index.contiguous();
  return make_result(nl::index_select(x.data(), d, idx), "IndexSelect", {x},
                     [in, d, idx](const Tensor& g, const std::vector<bool>&) {
                       Tensor gt = g.transpose(0, d).contiguous();
                       Shape ts = in;
                       std::swap(ts[0], ts[d]);
                       Tensor z = Tensor::zeros(ts, g.dtype(), g.device());
                       index_add_rows_(z, idx, gt);
                       return std::vector<Tensor>{z.transpose(0, d).contiguous()};
                     },
                     {saved(idx, "index")});
}

Variable gather(const Variable& x, int64_t dim, const Tensor& index) {
  const int d = wrap_dim(dim, x.dim(), "gather");
  Shape in = x.shape();
  Tensor it = index.transpose(d, -1).contiguous();
  return make_result(nl::gather(x.data(), d, index), "Gather", {x},
                     [in, d, it](const Tensor& g, const std::vector<bool>&) {
                       Shape ts = in;
                       std::swap(ts[d], ts.back());
                       Tensor z = Tensor::zeros(ts, g.dtype(), g.device());
                       Tensor gt = g.transpose(d, -1).contiguous();
                       scatter_add_rows_(z, it, gt);
                       return std::vector<Tensor>{z.transpose(d, -1).contiguous()};
                     },
                     {saved(it, "index")});
}

Variable embedding(const Variable& table, const Tensor& ids) {
  Shape ts = table.shape();
  Tensor idx = ids.contiguous();
  return make_result(nl::embedding(table.data(), idx), "Embedding", {table},
                     [ts, idx](const Tensor& g, const std::vector<bool>&) {
                       Tensor z = Tensor::zeros(ts, g.dtype(), g.device());
                       index_add_rows_(z, idx, g.contiguous());
                       return std::vector<Tensor>{z};
                     },
                     {saved(idx, "ids")});
}

}  // namespace nl
