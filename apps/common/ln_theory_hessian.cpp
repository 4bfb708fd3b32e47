// `ln-theory hessian` report (notes §2): closed-form vs numerical H, and the Proposition's bound.
#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>

#include "common/ln_theory.h"
#include "nn/theory/ln_hessian.h"
#include "report/markdown_table.h"

namespace nlapp {
namespace {

using namespace nl::lntheory;

std::string num(double v, int prec = 6) {
  std::ostringstream o;
  o.precision(prec);
  o << v;
  return o.str();
}

// x with a different scale and offset per group, so the groups' variances differ (§2 checks).
std::vector<double> random_x(int64_t d, int64_t groups, std::mt19937_64& rng) {
  std::normal_distribution<double> N;
  std::uniform_real_distribution<double> U(0.5, 2.0);
  std::vector<double> x((size_t)d);
  const int64_t n = d / groups;
  for (int64_t g = 0; g < groups; ++g) {
    const double scale = U(rng), offset = N(rng);
    for (int64_t i = 0; i < n; ++i) x[(size_t)(g * n + i)] = offset + scale * N(rng);
  }
  return x;
}

std::vector<int64_t> group_numbers(const HessianConfig& cfg) {
  if (cfg.d < 3 || cfg.d > 256)
    throw std::invalid_argument("--d must be in [3, 256] (LN on fewer features is linear or constant; the numerical H "
                                "costs 2d passes over d x d rows), got " + std::to_string(cfg.d));
  std::vector<int64_t> gs = cfg.groups;
  if (gs.empty())
    for (int64_t g = 1; g <= cfg.d / 2; ++g)
      if (cfg.d % g == 0) gs.push_back(g);
  for (int64_t g : gs)
    if (g < 1 || cfg.d % g != 0 || cfg.d / g < 2)
      throw std::invalid_argument("--groups " + std::to_string(g) + " must divide --d " + std::to_string(cfg.d) +
                                  " and leave groups of at least 2 features; pick a divisor g <= d/2");
  return gs;
}

}  // namespace

std::string hessian_report(const HessianConfig& cfg) {
  const std::vector<int64_t> gs = group_numbers(cfg);
  if (!(cfg.eps >= 0) || !std::isfinite(cfg.eps))
    throw std::invalid_argument("--eps must be a finite number >= 0, got " + std::to_string(cfg.eps));
  if (cfg.samples < 1 || cfg.samples > 1000000)
    throw std::invalid_argument("--samples must be in [1, 1000000], got " + std::to_string(cfg.samples));
  const int64_t d = cfg.d;
  std::mt19937_64 rng(cfg.seed);
  std::ostringstream out;
  out << "normlab ln-theory hessian: H(f; x) = sum_i ||d^2 y_i/dx^2||_F^2 (Ni et al. 2024; notes §2), d = " << d
      << ", seed " << cfg.seed << "\n\n"
      << "Closed form (§2, with eps and gain) vs numerical (nl::LayerNormG in float64: autograd Jacobian, central\n"
      << "differences, h = 1e-4 x the smallest group scale) on one random x per row (group scales 0.5..2);\n"
      << "gain 'random' = U(0.5, 1.5) per feature. g = number of groups (g = 1 is LN).\n\n";
  std::vector<std::vector<std::string>> rows;
  std::uniform_real_distribution<double> G(0.5, 1.5);
  double worst = 0;
  for (int64_t g : gs)
    for (double eps : {0.0, cfg.eps})
      for (bool with_gain : {false, true}) {
        const std::vector<double> x = random_x(d, g, rng);
        std::vector<double> gain;
        if (with_gain)
          for (int64_t k = 0; k < d; ++k) gain.push_back(G(rng));
        const double hc = lng_hessian_closed(x, g, eps, gain), hn = lng_hessian_numeric(x, g, eps, gain);
        const double rel = std::fabs(hc - hn) / std::max(1.0, std::fabs(hc));
        worst = std::max(worst, rel);
        rows.push_back({g == 1 ? "LN" : "LN-G", std::to_string(g), std::to_string(d / g), num(eps),
                        with_gain ? "random" : "1", num(hc, 10), num(hn, 10), num(rel, 2)});
      }
  out << markdown_table({"norm", "g", "group size", "eps", "gain", "H closed form", "H numerical", "|diff|/max(1,H)"},
                        rows, {Align::Left, Align::Right, Align::Right, Align::Right, Align::Left, Align::Right,
                               Align::Right, Align::Right})
      << "\nLargest relative difference: " << num(worst, 2) << (worst < 1e-6 ? " (< 1e-6: agree)\n" : " (>= 1e-6!)\n");

  // The Proposition (§2): H_G/H_L >= g(d - 2g)/(d - 2) for eps = 0, no gain, every x.
  out << "\nProposition (§2, eps = 0, gain 1): H(LN-G, g; x)/H(LN; x) >= g(d-2g)/(d-2) for every x, so >= 1 when\n"
      << "g <= d/3 (d >= 6) and >= d/8 at g = d/4. Checked on " << cfg.samples
      << " random x per g (group scales 0.5..2, closed form).\n\n";
  rows.clear();
  bool all_hold = true;
  for (int64_t g : gs) {
    const double bound = proposition_bound(d, g);
    double lo = INFINITY, sum = 0;
    for (int s = 0; s < cfg.samples; ++s) {
      const std::vector<double> x = random_x(d, g, rng);
      const double ratio = lng_hessian_eps0(x, g) / lng_hessian_eps0(x, 1);
      lo = std::min(lo, ratio);
      sum += ratio;
    }
    const bool holds = lo >= bound * (1 - 1e-12);
    all_hold = all_hold && holds;
    std::string claim = "-";
    if (4 * g == d) claim = "g = d/4: >= d/8 = " + num(d / 8.0, 4) + (lo >= d / 8.0 ? " (holds)" : " (FAILS)");
    else if (3 * g <= d && d >= 6) claim = std::string("g <= d/3: >= 1") + (lo >= 1 ? " (holds)" : " (FAILS)");
    rows.push_back({std::to_string(g), std::to_string(d / g), num(bound, 6), num(lo, 6), num(sum / cfg.samples, 6),
                    holds ? "yes" : "NO", claim});
  }
  out << markdown_table({"g", "group size", "bound g(d-2g)/(d-2)", "min ratio", "mean ratio", "min >= bound",
                         "slide claim"},
                        rows, {Align::Right, Align::Right, Align::Right, Align::Right, Align::Right, Align::Center,
                               Align::Left})
      << "\n" << (all_hold ? "The bound held on every sampled x." : "The bound FAILED on some x.")
      << " Group size 2 gives H = 0 with eps = 0 (outputs are +-1, §2).\n";
  return out.str();
}

}  // namespace nlapp
