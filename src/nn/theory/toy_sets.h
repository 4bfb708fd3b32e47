#pragma once
// The four two-class toy data sets of the SSR/LSSR table in Ni et al. 2024's slides (notes §1,
// "Toy table" [S]). The slides show the table (XOR first) but not the data, so these are our own
// seeded 2-D constructions of the same kinds: the table's SSR/LSSR values are the paper's, on its data.
#include <cstdint>
#include <string>
#include <vector>

#include "nn/theory/ssr.h"

namespace nl::lntheory {

/// One toy set with what the slides report for their version of it.
struct ToySet {
  std::string name;        ///< e.g. "1 XOR"
  std::string construction;  ///< how our points are drawn
  Points X1, X2;
  bool slide_separable = false;
  double slide_ssr = 0, slide_lssr = 0;
};

/// The four sets, `per_class` points per class, from `seed` (std::mt19937_64):
///   1 XOR: Gaussian blobs (std 0.3) at (1,1), (-1,-1) (class 1) and (1,-1), (-1,1) (class 2);
///   2 rings: class 1 a Gaussian disc (std 0.5), class 2 a ring of radius 2 (radial std 0.15);
///   3 blobs: Gaussian blobs (std 0.4, cut at radius 0.96 so they never touch) at (-1, 0) and (1, 0.6);
///   4 strips: two parallel strips, x uniform in [-1.2, 1.2], y uniform in [0.1, 0.7] vs [-0.7, -0.1].
/// Throws std::invalid_argument if per_class < 2.
std::vector<ToySet> slide_toy_sets(uint64_t seed, int per_class = 100);

/// XOR on the four corners of the unit square with labels 0, 1, 1, 0 for (0,0), (0,1), (1,0), (1,1).
void xor_corners(Points& X, std::vector<int>& labels);

/// A random instance for the projection merge: m points with coordinates N(0, 1) in R^dim and labels
/// 0/1 drawn with probability 1/2 each, from `seed`. Throws std::invalid_argument if m < 1 or dim < 1.
void random_labelled_points(int64_t m, int64_t dim, uint64_t seed, Points& X, std::vector<int>& labels);

}  // namespace nl::lntheory
