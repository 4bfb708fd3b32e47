// Toy data sets for the SSR/LSSR table (notes §1); see toy_sets.h.
#include "nn/theory/toy_sets.h"

#include <cmath>
#include <random>
#include <stdexcept>

namespace nl::lntheory {

std::vector<ToySet> slide_toy_sets(uint64_t seed, int per_class) {
  if (per_class < 2) throw std::invalid_argument("slide_toy_sets: per_class must be >= 2, got " + std::to_string(per_class));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> N;
  std::uniform_real_distribution<double> U(0.0, 1.0);
  const double pi = std::acos(-1.0);
  auto blob = [&](double cx, double cy, double sd) { return std::vector<double>{cx + sd * N(rng), cy + sd * N(rng)}; };
  std::vector<ToySet> sets(4);

  ToySet& x = sets[0];
  x = {"1 XOR", "blobs (std 0.3) at (1,1),(-1,-1) vs (1,-1),(-1,1)", {}, {}, false, 0.9963, 0.9929};
  for (int k = 0; k < per_class; ++k) {
    const double s = k % 2 ? 1.0 : -1.0;
    x.X1.push_back(blob(s, s, 0.3));
    x.X2.push_back(blob(s, -s, 0.3));
  }
  ToySet& r = sets[1];
  r = {"2 rings", "disc (std 0.5) inside a ring (radius 2, std 0.15)", {}, {}, false, 0.9929, 0.9859};
  for (int k = 0; k < per_class; ++k) {
    r.X1.push_back(blob(0, 0, 0.5));
    const double t = 2 * pi * U(rng), rad = 2 + 0.15 * N(rng);
    r.X2.push_back({rad * std::cos(t), rad * std::sin(t)});
  }
  ToySet& b = sets[2];
  b = {"3 blobs", "blobs (std 0.4, cut at radius 0.96) at (-1,0) and (1,0.6)", {}, {}, true, 0.2304, 0.1312};
  auto cut_blob = [&](double cx, double cy) {  // a Gaussian blob cut at 2.4 std: the two never touch
    for (;;) {
      const double dx = 0.4 * N(rng), dy = 0.4 * N(rng);
      if (dx * dx + dy * dy <= 0.96 * 0.96) return std::vector<double>{cx + dx, cy + dy};
    }
  };
  for (int k = 0; k < per_class; ++k) {
    b.X1.push_back(cut_blob(-1, 0));
    b.X2.push_back(cut_blob(1, 0.6));
  }
  ToySet& s = sets[3];
  s = {"4 strips", "x in [-1.2,1.2], y in [0.1,0.7] vs [-0.7,-0.1] (uniform)", {}, {}, true, 0.7365, 0.2157};
  for (int k = 0; k < per_class; ++k) {
    s.X1.push_back({-1.2 + 2.4 * U(rng), 0.1 + 0.6 * U(rng)});
    s.X2.push_back({-1.2 + 2.4 * U(rng), -0.7 + 0.6 * U(rng)});
  }
  return sets;
}

void xor_corners(Points& X, std::vector<int>& labels) {
  X = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  labels = {0, 1, 1, 0};
}

void random_labelled_points(int64_t m, int64_t dim, uint64_t seed, Points& X, std::vector<int>& labels) {
  if (m < 1 || dim < 1)
    throw std::invalid_argument("random_labelled_points: m and dim must be >= 1, got " + std::to_string(m) + ", " +
                                std::to_string(dim));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> N;
  std::bernoulli_distribution coin(0.5);
  X.assign((size_t)m, std::vector<double>((size_t)dim));
  labels.assign((size_t)m, 0);
  for (int64_t k = 0; k < m; ++k) {
    for (double& v : X[(size_t)k]) v = N(rng);
    labels[(size_t)k] = coin(rng) ? 1 : 0;
  }
}

}  // namespace nl::lntheory
