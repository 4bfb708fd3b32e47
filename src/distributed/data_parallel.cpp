#include "distributed/data_parallel.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace nl::dist {

namespace {
bool is_float(DType t) { return t == DType::Float32 || t == DType::Float64; }

// In-place broadcast of a contiguous CPU float tensor's storage.
void broadcast_tensor(ProcessGroup& pg, Tensor& t, const std::string& name) {
  if (!t.is_contiguous())
    throw std::invalid_argument("broadcast_module: '" + name + "' is not contiguous; the model must own contiguous "
                                "parameters and buffers");
  if (t.dtype() == DType::Float32)
    pg.broadcast(std::span<float>(t.data<float>(), (size_t)t.numel()), 0);
  else
    pg.broadcast(std::span<double>(t.data<double>(), (size_t)t.numel()), 0);
}
}  // namespace

void broadcast_module(ProcessGroup& pg, Module& m, bool parameters, bool buffers) {
  if (pg.world_size() == 1) return;
  // Every rank must have the same layout: compare the element count with rank 0's first.
  std::vector<std::pair<std::string, Tensor>> items;
  if (parameters)
    for (auto& [n, p] : m.named_parameters()) items.push_back({n, p.data()});
  if (buffers)
    for (auto& [n, b] : m.named_buffers())
      if (is_float(b.dtype())) items.push_back({n, b});
  double layout[2] = {(double)items.size(), 0};
  for (auto& it : items) layout[1] += (double)it.second.numel();
  double root[2] = {layout[0], layout[1]};
  pg.broadcast(std::span<double>(root, 2), 0);
  if (root[0] != layout[0] || root[1] != layout[1])
    throw std::invalid_argument("broadcast_module: rank " + std::to_string(pg.rank()) + " has " +
                                std::to_string((int64_t)layout[0]) + " tensors / " + std::to_string((int64_t)layout[1]) +
                                " elements but rank 0 has " + std::to_string((int64_t)root[0]) + " / " +
                                std::to_string((int64_t)root[1]) + ": start every rank with the same settings");
  for (auto& [n, t] : items) broadcast_tensor(pg, t, n);
}

namespace {
// The gradients of params[i] with has[i] > 0 and data dtype T, in one flat buffer: summed over the ranks,
// scaled, and set as the gradients (zeros where a rank had none).
template <class T>
void reduce_gradients_of(ProcessGroup& pg, const std::vector<Variable>& params, const std::vector<double>& has,
                         double scale, DType dt) {
  auto mine = [&](size_t i) { return has[i] > 0 && params[i].data().dtype() == dt; };
  int64_t total = 0;
  for (size_t i = 0; i < params.size(); ++i)
    if (mine(i)) total += params[i].data().numel();
  if (total == 0) return;
  std::vector<T> flat((size_t)total, T(0));
  int64_t off = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!mine(i)) continue;
    const Tensor& g = params[i].grad();
    const int64_t n = params[i].data().numel();
    if (g.defined()) {
      const Tensor c = g.to(dt).contiguous();
      std::memcpy(flat.data() + off, c.data<T>(), (size_t)n * sizeof(T));
    }
    off += n;
  }
  pg.all_reduce(std::span<T>(flat));
  const T k = (T)scale;
  if (k != T(1))
    for (T& v : flat) v *= k;
  off = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!mine(i)) continue;
    const int64_t n = params[i].data().numel();
    Tensor g = Tensor::empty(params[i].data().shape(), dt);
    std::memcpy(g.data<T>(), flat.data() + off, (size_t)n * sizeof(T));
    Variable p = params[i];
    p.set_grad(g);
    off += n;
  }
}
}  // namespace

void all_reduce_gradients(ProcessGroup& pg, const std::vector<Variable>& params, double scale) {
  // Which parameters have a gradient anywhere.
  std::vector<double> has(params.size());
  for (size_t i = 0; i < params.size(); ++i) has[i] = params[i].grad().defined() ? 1.0 : 0.0;
  pg.all_reduce(std::span<double>(has));
  reduce_gradients_of<float>(pg, params, has, scale, DType::Float32);
  reduce_gradients_of<double>(pg, params, has, scale, DType::Float64);
}

uint64_t module_hash(const Module& m) {
  uint64_t h = 1469598103934665603ull;
  for (const auto& [name, t] : m.state_dict()) {
    const Tensor c = t.contiguous();
    const auto* p = c.dtype() == DType::Float32   ? reinterpret_cast<const unsigned char*>(c.data<float>())
                    : c.dtype() == DType::Float64 ? reinterpret_cast<const unsigned char*>(c.data<double>())
                                                  : reinterpret_cast<const unsigned char*>(c.data<int64_t>());
    const size_t n = (size_t)c.numel() * (c.dtype() == DType::Float32 ? 4 : 8);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 1099511628211ull;
    }
  }
  return h;
}

bool replicas_identical(ProcessGroup& pg, const Module& m) {
  uint64_t mine = module_hash(m), root = mine;
  pg.broadcast(std::span<std::byte>(reinterpret_cast<std::byte*>(&root), sizeof root), 0);
  double differ = mine == root ? 0.0 : 1.0;
  pg.all_reduce(std::span<double>(&differ, 1));
  return differ == 0.0;
}

}  // namespace nl::dist
