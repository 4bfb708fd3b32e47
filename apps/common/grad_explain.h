#pragma once
// `normlab grad explain`: one random vector x and upstream gradient g through one norm variant, in
// float64 — the tape of the forward pass, the Jacobian dy/dx by autograd next to the closed form of
// Xu et al. 2019 (appendix B), and dL/dx's mean and variance against Theorem 1.
#include <cstdint>
#include <string>
#include <vector>

#include "nn/norm/theory.h"

namespace nlapp {

/// Largest H explain accepts: it builds H x H Jacobians with H backward passes and prints them.
inline constexpr int64_t kMaxExplainH = 4096;

struct ExplainConfig {
  std::string norm = "layernorm-simple";  ///< any name of nl::layernorm_family_names()
  int64_t H = 8;                          ///< size of x (2 ..= kMaxExplainH)
  uint64_t seed = 1;
  nl::theory::Estimator est;              ///< paper (default) or the released code's
  double C = 2.0, k = 0.1;                ///< AdaNorm's phi(y) = C(1 - k y) (paper's MNIST setting: C = 2)
};

struct ExplainResult {
  ExplainConfig cfg;
  std::vector<double> x, g;        ///< the input [H] and the upstream gradient dL/dy [H]
  nl::theory::Forward fwd;         ///< mu, sigma, s, D, y under cfg.est
  std::string tape;                ///< Tape::dump() of the composite forward
  nl::theory::Matrix autograd;     ///< dy/dx by autograd: row i = backward of e_i
  nl::theory::Matrix paper;        ///< theory::paper_jacobian (W1, W2, W3, I/sigma, ...)
  nl::theory::Matrix estimator;    ///< theory::estimator_jacobian under cfg.est (seed-code §1.2)
  double diff_paper = 0, diff_estimator = 0;  ///< largest |autograd - closed form|
  std::vector<double> grad;        ///< dL/dx = J^T g by autograd
  nl::theory::Theorem1Check check;        ///< dL/dx against Theorem 1 with the estimator's scale D
  nl::theory::Theorem1Check check_paper;  ///< ... with the paper's sigma (differs only for "code")
};

/// Runs the explanation: x = 2.5 N(0,1) + 1 and g = N(0,1) + 0.5 from nl::manual_seed(seed); the
/// composite implementation in float64 so Detach nodes appear on the tape; H backward passes with
/// retain_graph give the Jacobian. Throws std::invalid_argument on an unknown norm, H < 2,
/// H > kMaxExplainH, or a C or k that check_adanorm_options refuses (C not in (0, 1e6], k not finite).
ExplainResult explain_gradients(const ExplainConfig& cfg);

/// The closed form's name and equation for a variant, e.g. "W1 = (1/σ)(I − y yᵀ/H − 1 1ᵀ/H)  (Eq. 8)".
std::string closed_form_formula(const std::string& norm);

/// The printed report, sections (a)-(d); matrices larger than 10 x 10 are shown in their top-left corner.
std::string format_explain(const ExplainResult& r);

}  // namespace nlapp
