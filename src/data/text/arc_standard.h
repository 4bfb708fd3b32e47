#pragma once
// Projectivity and the arc-standard transition system of Chen & Manning (2014, "A Fast and Accurate
// Dependency Parser using Neural Networks", §2): a configuration is (stack, buffer, arcs) with the
// stack initialised to [ROOT] and the buffer to [1..n];
//   LEFT-ARC(l):  s1 -> s2 with label l, pop s2   (requires s2 != ROOT)
//   RIGHT-ARC(l): s2 -> s1 with label l, pop s1
//   SHIFT:        move b1 to the stack
// The static oracle: LEFT-ARC if head(s2) == s1; else RIGHT-ARC if head(s1) == s2 and every dependent of
// s1 is already attached; else SHIFT. It produces exactly 2n transitions for a projective tree.
#include <cstdint>
#include <string>
#include <vector>

namespace nl::data {

/// Whether the tree given by `heads` (heads[i] = head of word i+1, 0 = ROOT) is projective: no two arcs
/// cross when drawn above the sentence with ROOT at position 0. Throws std::invalid_argument on a head
/// outside [0, n].
bool is_projective(const std::vector<int>& heads);

/// Transition kinds of the arc-standard system.
enum class Move : int8_t { Shift = 0, LeftArc = 1, RightArc = 2 };

/// One transition; `label` is the dependency label for arcs, empty for SHIFT.
struct Transition {
  Move move = Move::Shift;
  std::string label;
  bool operator==(const Transition&) const = default;
};

/// The static oracle's transition sequence (2n transitions) for a projective tree. Throws
/// std::invalid_argument if the tree is not projective or not a tree (the oracle gets stuck).
std::vector<Transition> arc_standard_oracle(const std::vector<int>& heads, const std::vector<std::string>& labels);

/// The tree built by applying `transitions` to n words: heads (0 = ROOT) and labels per word.
struct ParsedTree {
  std::vector<int> heads;
  std::vector<std::string> labels;
};

/// Applies `transitions` from the initial configuration. Throws std::invalid_argument on an illegal
/// transition (e.g. SHIFT with an empty buffer, LEFT-ARC onto ROOT) or if the final configuration is
/// not terminal (stack [ROOT], empty buffer).
ParsedTree apply_transitions(int n, const std::vector<Transition>& transitions);

}  // namespace nl::data
