#include "common/grad_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "autograd/functions.h"
#include "common/grad_norms.h"
#include "nn/norm/factory.h"
#include "report/markdown_table.h"

namespace nlapp {
namespace th = nl::theory;
using nl::Tensor;
using nl::Variable;

namespace {
// Accumulates per-sample checks into a StatsRow.
void add_sample(StatsRow& row, const th::Theorem1Check& c) {
  row.samples += 1;
  row.sigma += c.sigma;
  row.mean += c.b.mean;
  row.pred_mean += c.pred.mean;
  row.var += c.b.var;
  row.pred_var += c.pred.var;
  const double sd = (std::sqrt(c.g.var) + std::abs(c.g.mean)) / c.pred_scale;
  if (sd > 0) row.max_mean_err = std::max(row.max_mean_err, std::abs(c.b.mean - c.pred.mean) / sd);
  const double dv = c.g.var / (c.pred_scale * c.pred_scale);
  if (dv > 0) {
    const double excess = (c.b.var - c.pred.var) / dv;
    row.max_var_excess = row.samples == 1 ? excess : std::max(row.max_var_excess, excess);
  }
  row.mean_share += c.mean_holds ? 1 : 0;
  row.var_share += c.var_holds ? 1 : 0;
  row.pred = c.pred;
}

void finish(StatsRow& row) {
  const double n = (double)row.samples;
  for (double* v : {&row.sigma, &row.mean, &row.pred_mean, &row.var, &row.pred_var, &row.mean_share, &row.var_share})
    *v /= n;
}
}  // namespace

std::vector<StatsRow> gradient_stats(const StatsConfig& cfg) {
  for (const auto& n : cfg.norms) th::require_variant(n);
  if (cfg.norms.empty()) throw std::invalid_argument("grad stats: no norm given");
  if (cfg.H < 2) throw std::invalid_argument("--H must be at least 2, got " + std::to_string(cfg.H));
  if (cfg.samples < 1) throw std::invalid_argument("--samples must be at least 1, got " + std::to_string(cfg.samples));
  if (cfg.chunk < 1) throw std::invalid_argument("grad stats: chunk must be at least 1");
  for (double s : cfg.scales)
    if (!(s > 0)) throw std::invalid_argument("grad stats: scales must be positive");

  const int64_t H = cfg.H, S = (int64_t)cfg.scales.size();
  std::vector<StatsRow> rows;
  std::vector<std::shared_ptr<nl::Module>> mods;
  for (const auto& n : cfg.norms) {
    mods.push_back(make_grad_norm(n, H, cfg.est, "fused", cfg.C, cfg.k));
    for (double s : cfg.scales) {
      StatsRow r;
      r.norm = n;
      r.scale = s;
      rows.push_back(r);
    }
  }
  nl::manual_seed(cfg.seed);
  const auto f64 = nl::DType::Float64;
  for (int64_t done = 0; done < cfg.samples; done += cfg.chunk) {
    const int64_t R = std::min(cfg.chunk, cfg.samples - done);
    Tensor base = nl::add(nl::mul(Tensor::randn({R, H}, 0, 1, f64), Tensor::rand({R, 1}, 0.5, 2.0, f64)),
                          Tensor::randn({R, 1}, 0, 1, f64));
    Tensor g = nl::add(Tensor::randn({R, H}, 0, 1, f64), Tensor::randn({R, 1}, 0.5, 1, f64));
    const std::vector<double> gv = g.to_vector<double>();
    for (int64_t si = 0; si < S; ++si) {
      Tensor x = nl::affine(base, cfg.scales[(size_t)si], 0.0);
      const std::vector<double> xv = x.to_vector<double>();
      for (size_t ni = 0; ni < cfg.norms.size(); ++ni) {
        Variable xin(x.clone(), true);
        mods[ni]->forward(xin).backward(g);
        const std::vector<double> bv = xin.grad().to_vector<double>();
        StatsRow& row = rows[ni * (size_t)S + (size_t)si];
        for (int64_t r = 0; r < R; ++r) {
          auto slice = [&](const std::vector<double>& v) {
            return std::vector<double>(v.begin() + r * H, v.begin() + (r + 1) * H);
          };
          add_sample(row, th::check_theorem1(cfg.norms[ni], slice(xv), slice(gv), slice(bv), cfg.est, cfg.C, cfg.k));
        }
      }
    }
  }
  for (auto& r : rows) finish(r);
  return rows;
}

namespace {
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}
std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f%%", 100.0 * v);
  return b;
}
}  // namespace

std::string format_stats(const std::vector<StatsRow>& rows, const StatsConfig& cfg) {
  const bool paper = !cfg.est.unbiased && cfg.est.eps == 0;
  const std::string sc = paper ? "σ" : "D";
  std::ostringstream o;
  o << "normlab grad stats: H = " << cfg.H << ", " << cfg.samples << " random (x, g) per scale, seed " << cfg.seed
    << ", estimator: " << (paper ? "paper" : "code") << " (" << cfg.est.str() << "), fused kernels, float64\n"
    << "Averages over the samples; \"holds\" = share of samples in which the (in)equality holds to 1e-9.\n";
  for (size_t i = 0; i < rows.size();) {
    const std::string norm = rows[i].norm;
    const nl::LayerNormVariant& v = nl::layernorm_variant(norm);
    const bool none = v.identity, ada = v.adaptive;
    const std::string gb = ada ? "ḡ'" : "ḡ", dg = ada ? "D_g'" : "D_g";
    const std::string mlabel = none ? gb : gb + "/" + sc, vlabel = none ? dg : dg + "/" + sc + "²";
    std::vector<std::vector<std::string>> cells;
    std::string statement;
    for (; i < rows.size() && rows[i].norm == norm; ++i) {
      const StatsRow& r = rows[i];
      statement = r.pred.statement;
      const bool centred = r.pred.mean_rel == th::Relation::Equal && r.pred.mean == 0 && !none;
      cells.push_back({num(r.scale), num(r.sigma), num(r.mean),
                       std::string(th::relation_str(r.pred.mean_rel)) + " " + (centred ? "0" : mlabel + " = " + num(r.pred_mean)),
                       num(r.var), std::string(th::relation_str(r.pred.var_rel)) + " " + vlabel + " = " + num(r.pred_var),
                       pct(r.mean_share), pct(r.var_share)});
    }
    o << "\n" << norm << ": " << statement << "\n\n"
      << markdown_table({"x scale", "mean " + sc, "mean(∂ℓ/∂x)", "theory", "var(∂ℓ/∂x)", "theory", "mean holds",
                         "var holds"},
                        cells, {Align::Right, Align::Right, Align::Right, Align::Left, Align::Right, Align::Left,
                                Align::Right, Align::Right});
  }
  return o.str();
}

}  // namespace nlapp
