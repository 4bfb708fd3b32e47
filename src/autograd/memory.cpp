#include "autograd/memory.h"

#include <unordered_set>
#include <vector>

#include "autograd/node.h"

namespace nl {

size_t graph_held_bytes(const Variable& root) {
  if (!root.defined() || !root.grad_fn()) return 0;
  std::unordered_set<const Storage*> storages;
  size_t bytes = 0;
  auto count = [&](const Tensor& t) {
    if (t.defined() && storages.insert(t.storage().get()).second) bytes += t.storage()->nbytes();
  };
  std::unordered_set<const Node*> seen{root.grad_fn()};
  std::vector<const Node*> stack{root.grad_fn()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const auto& s : n->saved) count(s.tensor);
    if (n->is_leaf_sink()) count(n->leaf->data);
    for (const auto& e : n->next)
      if (e.node && seen.insert(e.node.get()).second) stack.push_back(e.node.get());
  }
  return bytes;
}

}  // namespace nl
