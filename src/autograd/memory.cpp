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
    for (const auto& in : n->inputs) {
      count(in->data);
      if (in->grad_fn && seen.insert(in->grad_fn.get()).second) stack.push_back(in->grad_fn.get());
    }
  }
  return bytes;
}

}  // namespace nl
