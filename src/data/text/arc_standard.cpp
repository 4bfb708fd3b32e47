#include "data/text/arc_standard.h"

#include <algorithm>
#include <stdexcept>

namespace nl::data {

bool is_projective(const std::vector<int>& heads) {
  const int n = static_cast<int>(heads.size());
  for (int d = 1; d <= n; ++d) {
    int h = heads[static_cast<std::size_t>(d - 1)];
    if (h < 0 || h > n) throw std::invalid_argument("is_projective: head " + std::to_string(h) + " out of range");
  }
  // Arcs (min, max) cross iff exactly one endpoint of one lies strictly inside the other.
  for (int d1 = 1; d1 <= n; ++d1) {
    int a1 = std::min(d1, heads[static_cast<std::size_t>(d1 - 1)]);
    int b1 = std::max(d1, heads[static_cast<std::size_t>(d1 - 1)]);
    for (int d2 = d1 + 1; d2 <= n; ++d2) {
      int a2 = std::min(d2, heads[static_cast<std::size_t>(d2 - 1)]);
      int b2 = std::max(d2, heads[static_cast<std::size_t>(d2 - 1)]);
      if ((a1 < a2 && a2 < b1 && b1 < b2) || (a2 < a1 && a1 < b2 && b2 < b1)) return false;
    }
  }
  return true;
}

std::vector<Transition> arc_standard_oracle(const std::vector<int>& heads, const std::vector<std::string>& labels) {
  const int n = static_cast<int>(heads.size());
  if (labels.size() != heads.size()) throw std::invalid_argument("arc_standard_oracle: heads and labels differ in size");
  if (!is_projective(heads)) throw std::invalid_argument("arc_standard_oracle: tree is not projective");
  std::vector<int> pending(static_cast<std::size_t>(n + 1), 0);  // unattached dependents per word
  for (int h : heads) ++pending[static_cast<std::size_t>(h)];
  std::vector<int> stack{0};
  int next = 1;
  std::vector<Transition> out;
  out.reserve(static_cast<std::size_t>(2 * n));
  auto head_of = [&](int w) { return heads[static_cast<std::size_t>(w - 1)]; };
  while (next <= n || stack.size() > 1) {
    if (stack.size() >= 2) {
      int s1 = stack.back(), s2 = stack[stack.size() - 2];
      if (s2 != 0 && head_of(s2) == s1) {
        out.push_back({Move::LeftArc, labels[static_cast<std::size_t>(s2 - 1)]});
        --pending[static_cast<std::size_t>(s1)];
        stack.erase(stack.end() - 2);
        continue;
      }
      if (head_of(s1) == s2 && pending[static_cast<std::size_t>(s1)] == 0 && (s2 != 0 || next > n)) {
        out.push_back({Move::RightArc, labels[static_cast<std::size_t>(s1 - 1)]});
        --pending[static_cast<std::size_t>(s2)];
        stack.pop_back();
        continue;
      }
    }
    if (next > n) throw std::invalid_argument("arc_standard_oracle: stuck (not a well-formed tree)");
    out.push_back({Move::Shift, {}});
    stack.push_back(next++);
  }
  return out;
}

ParsedTree apply_transitions(int n, const std::vector<Transition>& ts) {
  ParsedTree t;
  t.heads.assign(static_cast<std::size_t>(n), -1);
  t.labels.assign(static_cast<std::size_t>(n), {});
  std::vector<int> stack{0};
  int next = 1;
  for (std::size_t k = 0; k < ts.size(); ++k) {
    const auto& tr = ts[k];
    auto bad = [&](const char* why) {
      throw std::invalid_argument("apply_transitions: transition " + std::to_string(k) + " illegal: " + why);
    };
    switch (tr.move) {
      case Move::Shift:
        if (next > n) bad("SHIFT with an empty buffer");
        stack.push_back(next++);
        break;
      case Move::LeftArc: {
        if (stack.size() < 3) bad("LEFT-ARC needs two words on the stack (s2 != ROOT)");
        int s1 = stack.back(), s2 = stack[stack.size() - 2];
        t.heads[static_cast<std::size_t>(s2 - 1)] = s1;
        t.labels[static_cast<std::size_t>(s2 - 1)] = tr.label;
        stack.erase(stack.end() - 2);
        break;
      }
      case Move::RightArc: {
        if (stack.size() < 2) bad("RIGHT-ARC needs two items on the stack");
        int s1 = stack.back(), s2 = stack[stack.size() - 2];
        t.heads[static_cast<std::size_t>(s1 - 1)] = s2;
        t.labels[static_cast<std::size_t>(s1 - 1)] = tr.label;
        stack.pop_back();
        break;
      }
    }
  }
  if (stack.size() != 1 || next <= n)
    throw std::invalid_argument("apply_transitions: final configuration is not terminal (stack size " +
                                std::to_string(stack.size()) + ", " + std::to_string(n - next + 1) + " word(s) left)");
  return t;
}

}  // namespace nl::data
