#pragma once
// The parser configuration and feature templates of Chen & Manning (2014, "A Fast and Accurate
// Dependency Parser using Neural Networks", §3.1): an arc-standard configuration (arc_standard.h)
// advanced one transition at a time, and its 48 features:
//   words (18): s1 s2 s3 b1 b2 b3, then for k = s1, s2: lc1(k) rc1(k) lc2(k) rc2(k) lc1(lc1(k)) rc1(rc1(k));
//   POS tags (18): the tags of the same 18 positions in the same order;
//   arc labels (12): the labels of the 12 child positions (lc1(s1) ... rc1(rc1(s2))) in the same order.
// lc1/lc2 are the leftmost / second-leftmost children left of the head, rc1/rc2 the rightmost /
// second-rightmost right of it (as Stanford CoreNLP's nndep, Chen & Manning's released code).
// A position that does not exist gives the NULL id; ROOT (word 0) gives whatever id the caller put
// at index 0 of the id arrays (conventionally kParseRoot).
#include <cstdint>
#include <vector>

#include "data/text/arc_standard.h"

namespace nl::data {

/// Special ids of the parser's word and POS vocabularies (labels use only kParseNull).
inline constexpr int32_t kParseNull = 0;  ///< position absent
inline constexpr int32_t kParseUnk = 1;   ///< word or tag not in the vocabulary
inline constexpr int32_t kParseRoot = 2;  ///< the ROOT token
inline constexpr int kParseWordFeatures = 18, kParsePosFeatures = 18, kParseLabelFeatures = 12;
inline constexpr int kParseFeatures = kParseWordFeatures + kParsePosFeatures + kParseLabelFeatures;  ///< 48

/// An arc-standard configuration over words 1..n (0 = ROOT): stack [ROOT] and buffer [1..n] at start.
/// Arc labels are integer ids chosen by the caller (they reappear as label features).
class ArcStandardState {
 public:
  /// The initial configuration of a sentence of n >= 0 words. Throws std::invalid_argument on n < 0.
  explicit ArcStandardState(int n);
  int n() const { return n_; }
  /// The i-th stack item from the top (0 = s1), or -1 when the stack is shorter.
  int stack(int i) const;
  /// The i-th buffer word (0 = b1), or -1 when the buffer is shorter.
  int buffer(int i) const;
  int stack_size() const { return static_cast<int>(stack_.size()); }
  /// Whether `m` is legal: SHIFT needs a non-empty buffer; LEFT-ARC needs s2 != ROOT; RIGHT-ARC needs
  /// two stack items and, when s2 is ROOT, an empty buffer (so the tree has a single root word).
  bool can_apply(Move m) const;
  /// Applies `m` (label ignored for SHIFT). Throws std::invalid_argument when `m` is illegal.
  void apply(Move m, int32_t label);
  /// Stack [ROOT] and an empty buffer.
  bool terminal() const { return next_ > n_ && stack_.size() == 1; }
  /// Head of word w in 1..n (-1 while unattached) and its label id (kParseNull while unattached).
  int head(int w) const { return head_[static_cast<std::size_t>(w)]; }
  int32_t label(int w) const { return label_[static_cast<std::size_t>(w)]; }
  /// The k-th (1-based) leftmost child of w left of w, or -1; w = -1 gives -1.
  int left_child(int w, int k) const;
  /// The k-th (1-based) rightmost child of w right of w, or -1; w = -1 gives -1.
  int right_child(int w, int k) const;

 private:
  int n_;
  int next_ = 1;  ///< first buffer word
  std::vector<int> stack_;
  std::vector<int> head_;
  std::vector<int32_t> label_;
  std::vector<std::vector<int>> left_, right_;  ///< children of each word, sorted by position
};

/// Writes the 48 features of `c` to out[0..47] in the order of the file comment: 18 word ids from
/// word_ids, 18 tag ids from pos_ids (both indexed by position 0..n, index 0 = ROOT), then 12 label
/// ids from the configuration's arcs. Absent positions give kParseNull.
void parser_features(const ArcStandardState& c, const int32_t* word_ids, const int32_t* pos_ids, int32_t* out);

}  // namespace nl::data
