#include "autograd/memory.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "autograd/node.h"

namespace nl {

std::map<std::string, size_t> graph_held_bytes_by_op(const Variable& root) {
  std::map<std::string, size_t> by_op;
  if (!root.defined() || !root.grad_fn()) return by_op;
  std::unordered_set<const Storage*> storages;
  auto count = [&](const Tensor& t, const std::string& who) {
    if (t.defined() && storages.insert(t.storage().get()).second) by_op[who] += t.storage()->nbytes();
  };
  std::unordered_set<const Node*> seen{root.grad_fn()};
  std::vector<const Node*> stack{root.grad_fn()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const auto& s : n->saved) count(s.tensor, n->name);
    if (n->is_leaf_sink()) count(n->leaf->data, "parameters and leaves");
    for (const auto& e : n->next)
      if (e.node && seen.insert(e.node.get()).second) stack.push_back(e.node.get());
  }
  return by_op;
}

size_t graph_held_bytes(const Variable& root) {
  size_t bytes = 0;
  for (const auto& [op, b] : graph_held_bytes_by_op(root)) bytes += b;
  return bytes;
}

}  // namespace nl
