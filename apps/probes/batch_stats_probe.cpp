#include "probes/batch_stats_probe.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "engine/run_folder.h"
#include "engine/trainer.h"
#include "nn/norm/factory.h"
#include "probes/probe_common.h"
#include "report/markdown_table.h"
#include "report/metrics_log.h"
#include "report/plot_svg.h"

namespace nlapp {
using nl::Tensor;
using nl::Variable;
using json = nlohmann::json;

namespace {
const double kNaN = std::nan("");

// (1/d) ||a - b|| over the d features (a, b hold d values each), computed in float64.
double dist(const Tensor& a, const Tensor& b) {
  const auto av = a.to_vector<double>(), bv = b.to_vector<double>();
  double s = 0;
  for (size_t i = 0; i < av.size(); ++i) s += (av[i] - bv[i]) * (av[i] - bv[i]);
  return std::sqrt(s) / (double)av.size();
}

// (1/d) ||g|| of a statistic's gradient; NaN when it has none.
double grad_norm(const Variable& v) {
  if (!v.defined() || !v.requires_grad() || !v.grad().defined()) return kNaN;
  const auto g = v.grad().to_vector<double>();
  double s = 0;
  for (double x : g) s += x * x;
  return std::sqrt(s) / (double)g.size();
}

json num_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Averages the values of the forwards of one update (NaN fields stay NaN only if all are).
BatchStatsValues average(const std::vector<BatchStatsValues>& vs) {
  BatchStatsValues r;
  auto avg = [&](double BatchStatsValues::*f) {
    double s = 0;
    int n = 0;
    for (const auto& v : vs)
      if (std::isfinite(v.*f)) s += v.*f, ++n;
    return n ? s / n : kNaN;
  };
  r.mean_dist = avg(&BatchStatsValues::mean_dist);
  r.var_dist = avg(&BatchStatsValues::var_dist);
  r.grad_mean = avg(&BatchStatsValues::grad_mean);
  r.grad_var = avg(&BatchStatsValues::grad_var);
  return r;
}

BatchStatsRun probe_one(Task& task, json settings, const BatchStatsProbeConfig& cfg, const std::string& norm) {
  settings = probe_run_settings(std::move(settings), norm, cfg.steps, cfg.out);
  task.setup(settings);
  BatchStatsRun run;
  run.norm = norm;
  run.jsonl = cfg.out / (norm + ".jsonl");
  run.svg = cfg.out / (norm + ".svg");
  MetricsLog log(run.jsonl, /*append=*/false);
  std::vector<nl::BatchStats> seen;  // the watched layer's statistics in the current update's forwards
  TrainerHooks hooks;
  hooks.after_backward = [&](int64_t update, double loss) {
    if (seen.empty()) return;
    std::vector<BatchStatsValues> vs;
    for (const auto& s : seen) vs.push_back(batch_stats_values(s));
    run.records.push_back(batch_stats_record(update, loss, average(vs)));
    log.write(run.records.back());
    seen.clear();  // release the update's activations
  };
  Trainer trainer(task, settings, hooks);
  nl::Module& m = find_probe_layer(
      trainer.model(), cfg.layer, [](const std::string&, const nl::Module& mod) { return nl::uses_batch_statistics(mod); },
      "grad batch-stats", "with batch statistics (batchnorm, powernorm-v, powernorm)");
  auto* layer = dynamic_cast<nl::MaskedNorm*>(&m);
  if (!layer)
    throw std::invalid_argument("grad batch-stats: module '" + cfg.layer + "' is a " + m.type_name() +
                                ", not a batch-statistic norm; pass --layer with the name of a batchnorm, powernorm-v "
                                "or powernorm module");
  layer->register_batch_stats_hook([&](nl::MaskedNorm&, const nl::BatchStats& s) {
    nl::BatchStats k = s;
    if (k.mean.defined() && k.mean.requires_grad()) k.mean.retain_grad();
    if (k.var.defined() && k.var.requires_grad()) k.var.retain_grad();
    seen.push_back(k);
  });
  try {
    trainer.run();
  } catch (const TrainingDiverged& e) {
    if (!cfg.quiet) std::cerr << "  " << norm << ": " << e.what() << "\n";
  }
  PlotSpec spec{norm + ": batch vs running statistics and their gradients at " +
                    (cfg.layer.empty() ? std::string("the first batch-statistic norm") : cfg.layer),
                "update", "(1/d) ||·|| (log scale)", /*log_y=*/true};
  write_line_chart(run.svg, spec,
                   {series_of(run.records, "mean_dist", "(1/d)‖μ_B − μ‖"),
                    series_of(run.records, "var_dist", "(1/d)‖σ²_B − σ²‖ (ψ² for PN)"),
                    series_of(run.records, "grad_mean", "(1/d)‖∂L/∂μ_B‖"),
                    series_of(run.records, "grad_var", "(1/d)‖∂L/∂σ²_B‖ (ψ² for PN-V)")});
  return run;
}
}  // namespace

std::vector<std::string> parse_batch_stat_norms(const std::string& spec) {
  std::vector<std::string> out;
  if (spec == "all") {  // every norm of the table that pools batch statistics
    for (const auto& d : nl::norm_table())
      if (d.batch_statistics) out.push_back(d.name);
    return out;
  }
  std::stringstream ss(spec);
  for (std::string name; std::getline(ss, name, ',');)
    if (!name.empty()) out.push_back(name);
  if (out.empty()) throw std::invalid_argument("--norm: no norm given (use 'all' or a comma-separated list)");
  return out;
}

BatchStatsValues batch_stats_values(const nl::BatchStats& s) {
  BatchStatsValues v;
  v.mean_dist = s.mean.defined() && s.running_mean.defined() ? dist(s.mean.data(), s.running_mean) : kNaN;
  v.var_dist = s.var.defined() && s.running_var.defined() ? dist(s.var.data(), s.running_var) : kNaN;
  v.grad_mean = grad_norm(s.mean);
  v.grad_var = grad_norm(s.var);
  return v;
}

json batch_stats_record(int64_t step, double loss, const BatchStatsValues& v) {
  return {{"step", step},
          {"loss", num_or_null(loss)},
          {"mean_dist", num_or_null(v.mean_dist)},
          {"var_dist", num_or_null(v.var_dist)},
          {"grad_mean", num_or_null(v.grad_mean)},
          {"grad_var", num_or_null(v.grad_var)}};
}

std::vector<BatchStatsRun> run_batch_stats_probe(Task& task, const json& settings, const BatchStatsProbeConfig& cfg) {
  if (cfg.norms.empty()) throw std::invalid_argument("grad batch-stats: no norm given");
  for (const auto& n : cfg.norms)
    if (!nl::norm_uses_batch_statistics(n))
      throw std::invalid_argument("grad batch-stats: norm '" + n +
                                  "' keeps no batch statistics; --norm takes batchnorm, powernorm-v or powernorm");
  if (cfg.steps < 1) throw std::invalid_argument("--steps must be at least 1, got " + std::to_string(cfg.steps));
  create_out_folder(cfg.out);  // a clear error when --out is a file
  std::vector<BatchStatsRun> runs;
  std::vector<Series> var_cmp, grad_cmp;
  for (const auto& n : cfg.norms) {
    if (!cfg.quiet) std::cerr << "probing " << n << ": " << cfg.steps << " steps\n";
    runs.push_back(probe_one(task, settings, cfg, n));
    var_cmp.push_back(series_of(runs.back().records, "var_dist", n));
    grad_cmp.push_back(series_of(runs.back().records, "grad_var", n));
  }
  write_line_chart(cfg.out / "var-dist.svg",
                   PlotSpec{"(1/d)‖σ²_B − σ²‖ (BN) and (1/d)‖ψ²_B − ψ²‖ (PN-V, PN): batch vs running", "update",
                            "log scale", true},
                   var_cmp);
  write_line_chart(cfg.out / "grad-var.svg",
                   PlotSpec{"(1/d)‖∂L/∂σ²_B‖ (BN) and (1/d)‖∂L/∂ψ²_B‖ (PN-V)", "update", "log scale", true},
                   grad_cmp);
  return runs;
}

std::string format_batch_stats_summary(const std::vector<BatchStatsRun>& runs) {
  auto num = [](double v) {
    if (!std::isfinite(v)) return std::string("–");
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return std::string(b);
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : runs)
    rows.push_back({r.norm, std::to_string(r.records.size()), num(field_mean(r.records, "mean_dist")),
                    num(field_mean(r.records, "var_dist")), num(field_mean(r.records, "grad_mean")),
                    num(field_mean(r.records, "grad_var"))});
  return markdown_table({"norm", "updates", "(1/d)‖μ_B − μ‖", "(1/d)‖σ²_B − σ²‖ or ψ²", "(1/d)‖∂L/∂μ_B‖",
                         "(1/d)‖∂L/∂σ²_B‖ or ψ²"},
                        rows, {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right});
}

}  // namespace nlapp
