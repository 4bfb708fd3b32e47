#include "distributed/process_group.h"

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace nl::dist {

size_t elem_size(ElemType t) { return t == ElemType::Float32 ? 4 : t == ElemType::Float64 ? 8 : 1; }

namespace {
template <class T>
void divide(T* p, int64_t n, int world) {
  const T w = (T)world;
  for (int64_t i = 0; i < n; ++i) p[i] /= w;
}
}  // namespace

void ProcessGroup::divide_by_world(void* buf, int64_t n, ElemType t) const {
  if (t == ElemType::Float32) divide(static_cast<float*>(buf), n, world_size());
  if (t == ElemType::Float64) divide(static_cast<double*>(buf), n, world_size());
}

void ProcessGroup::all_reduce(std::span<float> buf, ReduceOp op) {
  all_reduce_raw(buf.data(), (int64_t)buf.size(), ElemType::Float32, op);
}

void ProcessGroup::all_reduce(std::span<double> buf, ReduceOp op) {
  all_reduce_raw(buf.data(), (int64_t)buf.size(), ElemType::Float64, op);
}

void ProcessGroup::check_root(int root) const {
  if (root < 0 || root >= world_size())
    throw std::invalid_argument("broadcast: root " + std::to_string(root) + " is not a rank of this group of " +
                                std::to_string(world_size()) + " (use 0.." + std::to_string(world_size() - 1) + ")");
}

void ProcessGroup::broadcast(std::span<float> buf, int root) {
  check_root(root);
  broadcast_raw(buf.data(), (int64_t)buf.size(), ElemType::Float32, root);
}
void ProcessGroup::broadcast(std::span<double> buf, int root) {
  check_root(root);
  broadcast_raw(buf.data(), (int64_t)buf.size(), ElemType::Float64, root);
}
void ProcessGroup::broadcast(std::span<std::byte> buf, int root) {
  check_root(root);
  broadcast_raw(buf.data(), (int64_t)buf.size(), ElemType::Byte, root);
}

namespace {
void check_gather(size_t in, size_t out, int world) {
  if (out != in * (size_t)world)
    throw std::invalid_argument("all_gather: the output holds " + std::to_string(out) + " elements but " +
                                std::to_string(world) + " ranks x " + std::to_string(in) + " need " +
                                std::to_string(in * (size_t)world) + "; size it world_size() * in.size()");
}
}  // namespace

void ProcessGroup::all_gather(std::span<const float> in, std::span<float> out) {
  check_gather(in.size(), out.size(), world_size());
  all_gather_raw(in.data(), out.data(), (int64_t)in.size(), ElemType::Float32);
}
void ProcessGroup::all_gather(std::span<const double> in, std::span<double> out) {
  check_gather(in.size(), out.size(), world_size());
  all_gather_raw(in.data(), out.data(), (int64_t)in.size(), ElemType::Float64);
}

void LocalProcessGroup::abort(const std::string& why, int exit_code) {
  std::cerr << "normlab: " << why << std::endl;
  std::exit(exit_code);
}

void LocalProcessGroup::all_gather_raw(const void* in, void* out, int64_t n, ElemType t) {
  if (n > 0) std::memcpy(out, in, (size_t)n * elem_size(t));
}

}  // namespace nl::dist
