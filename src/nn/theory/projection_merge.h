#pragma once
// The Projection Merge Algorithm of Ni et al. 2024 (Algorithm 1; ../shared/docs/ni-pn-details.md §3)
// and the width-3 LN-Net it defines: m points with any binary labels are classified by
//   Linear(D -> 3) -> LN(3) -> Linear(3 -> 3) -> LN(3) -> ... -> LN(3) -> Linear(3 -> 1)
// with at most m - 2 LayerNorms (§3 [S]: "an LN-Net with width 3 and depth L has VC dimension >= L + 2").
//
// Our reading (§3 [D]): the points are first projected to distinct scalars p_k = w . x_k. One merge
// step with the smallest active value p_i and the next-larger value p_j of the same label,
// mid = (p_i + p_j)/2 and c = (p_j - p_i)/2 > 0, maps every point through
//   p -> c / sqrt((p - mid)^2 + c^2)      (Algorithm 1, lines 9-11: h = [p - mid; c], x = h/||h||, p' = x_2)
// which sends p_i and p_j to the same value 1/sqrt(2) and merges no two points of different labels.
// The loop ends when each class has one value (§3, simulation [D]); a threshold separates them.
//
// As an LN-Net (§3 "As an LN-Net" [I]): with Q an orthonormal 3 x 2 basis of {z : 1^T z = 0},
// LN(Q h) = sqrt(3) Q h/||h|| (eps = 0, no gain), and (1/sqrt(3)) Q^T reads h/||h|| back; read-out,
// projection, shift and re-embedding compose into one affine 3 x 3 map (a Linear with bias) per merge.
#include <cstdint>
#include <memory>
#include <vector>

#include "nn/sequential.h"
#include "nn/theory/ssr.h"

namespace nl::lntheory {

/// One merge step: p -> c / sqrt((p - mid)^2 + c^2), c > 0.
struct MergeStep {
  double mid = 0, c = 1;
  double apply(double p) const;
};

/// Algorithm 1 on scalars p [m] with labels (0/1) [m]: the merge steps in order, and the values after
/// them. Values are compared exactly (merged points have bit-identical values). Throws
/// std::invalid_argument on sizes that differ, m < 1, a label other than 0/1, a non-finite value, or
/// two points with equal value but different labels (no network can separate them).
struct MergeRun {
  std::vector<MergeStep> steps;
  std::vector<double> final_values;
};
MergeRun projection_merge_scalar(const std::vector<double>& p, const std::vector<int>& labels);

/// A width-3 LN-Net built by the projection merge, with its construction.
struct MergeNet {
  std::vector<double> w;        ///< input projection p = w . x (unit length) [D]
  MergeRun run;                 ///< the merge steps (one LayerNorm each) and the final scalar values
  double threshold = 0;         ///< between the two final values
  double sign = 1;              ///< label 1 iff sign * (p_final - threshold) > 0
  double min_gap = 0;           ///< smallest distance between the two classes' initial projections
  std::shared_ptr<Sequential> net;  ///< float64 Linear/LayerNorm stack [N, D] -> [N, 1] scores
  int64_t layer_norms() const { return (int64_t)run.steps.size(); }
};

/// Runs Algorithm 1 on points X [m][D] with labels (0/1) (skipped when all labels agree: then no
/// LayerNorm is needed) and builds the LN-Net: Linear(D, 3) (or
/// Linear(D, 1) when no merge is needed), then per merge LayerNorm(3, eps 0, no gain) and a Linear with
/// bias, the last one Linear(3, 1) giving the score sign * (p_final - threshold) (label 1 iff > 0). All
/// parameters float64. The projection w is drawn from `seed` (retried until the projections of
/// differently labelled points are well apart). Throws std::invalid_argument on an empty X, points of
/// different dimensions, a label other than 0/1, a size mismatch, or the same point with both labels.
MergeNet build_merge_net(const Points& X, const std::vector<int>& labels, uint64_t seed = 0);

/// Predicted labels (0/1) of the built network on X through normlab's forward (one float64 batch);
/// returns the raw scores in `scores` when non-null. Throws std::invalid_argument on an empty X or
/// points of another dimension than the network's input.
std::vector<int> merge_net_predict(const MergeNet& mn, const Points& X, std::vector<double>* scores = nullptr);

/// The linear read-out r (R^3) of the merged scalar after any LayerNorm of the network: p = r . z,
/// r = q2/sqrt(3) (Algorithm 1, line 11: p' = x_2 with x = Q^T z/sqrt(3)).
std::vector<double> merge_readout();

/// The features after each LayerNorm of the built network on X (one Points per LayerNorm, each
/// point in R^3), through normlab's forward. Throws as merge_net_predict.
std::vector<Points> merge_net_features(const MergeNet& mn, const Points& X);

}  // namespace nl::lntheory
