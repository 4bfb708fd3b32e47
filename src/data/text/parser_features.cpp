#include "data/text/parser_features.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nl::data {

ArcStandardState::ArcStandardState(int n) : n_(n) {
  if (n < 0) throw std::invalid_argument("ArcStandardState: sentence length must be >= 0, got " + std::to_string(n));
  stack_.push_back(0);
  head_.assign(static_cast<std::size_t>(n + 1), -1);
  label_.assign(static_cast<std::size_t>(n + 1), kParseNull);
  left_.resize(static_cast<std::size_t>(n + 1));
  right_.resize(static_cast<std::size_t>(n + 1));
}

int ArcStandardState::stack(int i) const {
  return i >= 0 && i < stack_size() ? stack_[stack_.size() - 1 - static_cast<std::size_t>(i)] : -1;
}

int ArcStandardState::buffer(int i) const { return i >= 0 && next_ + i <= n_ ? next_ + i : -1; }

bool ArcStandardState::can_apply(Move m) const {
  switch (m) {
    case Move::Shift: return next_ <= n_;
    case Move::LeftArc: return stack_.size() >= 3;
    case Move::RightArc: return stack_.size() >= 3 || (stack_.size() == 2 && next_ > n_);
  }
  return false;
}

void ArcStandardState::apply(Move m, int32_t label) {
  if (!can_apply(m))
    throw std::invalid_argument(std::string("ArcStandardState: illegal ") +
                                (m == Move::Shift ? "SHIFT (empty buffer)"
                                 : m == Move::LeftArc ? "LEFT-ARC (s2 is ROOT or missing)"
                                                      : "RIGHT-ARC (needs two stack items; onto ROOT only with an empty buffer)"));
  if (m == Move::Shift) {
    stack_.push_back(next_++);
    return;
  }
  const int s1 = stack_.back(), s2 = stack_[stack_.size() - 2];
  const int dep = m == Move::LeftArc ? s2 : s1, hd = m == Move::LeftArc ? s1 : s2;
  head_[static_cast<std::size_t>(dep)] = hd;
  label_[static_cast<std::size_t>(dep)] = label;
  auto& kids = dep < hd ? left_[static_cast<std::size_t>(hd)] : right_[static_cast<std::size_t>(hd)];
  kids.insert(std::lower_bound(kids.begin(), kids.end(), dep), dep);
  if (m == Move::LeftArc)
    stack_.erase(stack_.end() - 2);
  else
    stack_.pop_back();
}

int ArcStandardState::left_child(int w, int k) const {
  if (w < 0) return -1;
  const auto& kids = left_[static_cast<std::size_t>(w)];
  return k >= 1 && k <= static_cast<int>(kids.size()) ? kids[static_cast<std::size_t>(k - 1)] : -1;
}

int ArcStandardState::right_child(int w, int k) const {
  if (w < 0) return -1;
  const auto& kids = right_[static_cast<std::size_t>(w)];
  return k >= 1 && k <= static_cast<int>(kids.size()) ? kids[kids.size() - static_cast<std::size_t>(k)] : -1;
}

void parser_features(const ArcStandardState& c, const int32_t* word_ids, const int32_t* pos_ids, int32_t* out) {
  int pos[kParseWordFeatures];
  int j = 0;
  for (int i = 0; i < 3; ++i) pos[j++] = c.stack(i);
  for (int i = 0; i < 3; ++i) pos[j++] = c.buffer(i);
  for (int i = 0; i < 2; ++i) {
    const int k = c.stack(i);
    pos[j++] = c.left_child(k, 1);
    pos[j++] = c.right_child(k, 1);
    pos[j++] = c.left_child(k, 2);
    pos[j++] = c.right_child(k, 2);
    pos[j++] = c.left_child(c.left_child(k, 1), 1);
    pos[j++] = c.right_child(c.right_child(k, 1), 1);
  }
  for (int f = 0; f < kParseWordFeatures; ++f) {
    const int p = pos[f];
    out[f] = p < 0 ? kParseNull : word_ids[p];
    out[kParseWordFeatures + f] = p < 0 ? kParseNull : pos_ids[p];
  }
  for (int f = 0; f < kParseLabelFeatures; ++f) {
    const int p = pos[6 + f];
    out[kParseWordFeatures + kParsePosFeatures + f] = p < 0 ? kParseNull : c.label(p);
  }
}

}  // namespace nl::data
