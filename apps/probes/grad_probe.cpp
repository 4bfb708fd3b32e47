#include "probes/grad_probe.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "autograd/functions.h"
#include "report/markdown_table.h"
#include "report/metrics_log.h"
#include "report/plot_svg.h"
#include "engine/run_folder.h"
#include "engine/trainer.h"
#include "nn/norm/theory.h"
#include "probes/probe_common.h"

namespace nlapp {
using nl::Tensor;
using nl::Variable;
using json = nlohmann::json;

ProbeStats probe_stats(const Tensor& x, const Tensor& g, const Tensor& dx) {
  if (x.dim() != 2 || g.shape() != x.shape() || dx.shape() != x.shape() || x.size(1) < 2)
    throw std::invalid_argument("probe_stats: x, g and dx must share one shape [B, H] with H >= 2, got " +
                                nl::shape_str(x.shape()) + ", " + nl::shape_str(g.shape()) + ", " +
                                nl::shape_str(dx.shape()));
  const int64_t B = x.size(0), H = x.size(1);
  const std::vector<double> xv = x.to_vector<double>(), gv = g.to_vector<double>(), dv = dx.to_vector<double>();
  ProbeStats s;
  for (int64_t r = 0; r < B; ++r) {
    const auto mx = nl::theory::moments(xv.data() + r * H, H);
    const auto mg = nl::theory::moments(gv.data() + r * H, H);
    const auto md = nl::theory::moments(dv.data() + r * H, H);
    const double sigma = std::sqrt(mx.var);
    s.x_sigma += sigma;
    s.g_mean += mg.mean;
    s.g_abs_mean += std::abs(mg.mean);
    s.g_var += mg.var;
    s.dx_mean += md.mean;
    s.dx_abs_mean += std::abs(md.mean);
    s.dx_var += md.var;
    s.pred_abs_mean += std::abs(mg.mean) / sigma;
    s.pred_var += mg.var / (sigma * sigma);
  }
  for (double* v : {&s.x_sigma, &s.g_mean, &s.g_abs_mean, &s.g_var, &s.dx_mean, &s.dx_abs_mean, &s.dx_var,
                    &s.pred_abs_mean, &s.pred_var})
    *v /= (double)B;
  return s;
}

const std::vector<std::string>& probe_fields() {
  static const std::vector<std::string> f{"step",   "loss",        "x_sigma", "g_mean",        "g_abs_mean", "g_var",
                                          "dx_mean", "dx_abs_mean", "dx_var", "pred_abs_mean", "pred_var"};
  return f;
}

json probe_record(int64_t step, double loss, const ProbeStats& s) {
  return {{"step", step},           {"loss", loss},       {"x_sigma", s.x_sigma},
          {"g_mean", s.g_mean},     {"g_abs_mean", s.g_abs_mean}, {"g_var", s.g_var},
          {"dx_mean", s.dx_mean},   {"dx_abs_mean", s.dx_abs_mean}, {"dx_var", s.dx_var},
          {"pred_abs_mean", s.pred_abs_mean}, {"pred_var", s.pred_var}};
}

namespace {
// A norm slot: the last part of the dotted name holds "norm" (norm, norm0, stem_norm, self_attn_layer_norm).
bool is_norm_slot(const std::string& name) {
  const size_t dot = name.rfind('.');
  return (dot == std::string::npos ? name : name.substr(dot + 1)).find("norm") != std::string::npos;
}
}  // namespace

nl::Module& find_grad_probe_layer(nl::Module& model, const std::string& layer) {
  nl::Module& m = find_probe_layer(
      model, layer,
      [](const std::string& n, const nl::Module&) { return n.size() >= 4 && n.compare(n.size() - 4, 4, "norm") == 0; },
      "grad probe", "named *norm");
  if (!layer.empty() && !is_norm_slot(layer)) {
    std::string norms;
    for (const auto& [n, mod] : model.named_modules())
      if (!n.empty() && is_norm_slot(n)) norms += (norms.empty() ? "" : ", ") + n;
    throw std::invalid_argument(
        "grad probe: --layer " + layer + " is a " + m.type_name() +
        ", not a norm layer: the probe compares the gradient at a norm's output with the one at its input, row by "
        "row, which needs a layer whose output has its input's shape; --layer takes " +
        (norms.empty() ? std::string("a norm layer, and this model has none") : "one of: " + norms));
  }
  return m;
}

namespace {
ProbeRun probe_one(Task& task, json settings, const ProbeConfig& cfg, const std::string& norm) {
  settings = probe_run_settings(std::move(settings), norm, cfg.steps, cfg.out);
  task.setup(settings);
  ProbeRun run;
  run.norm = norm;
  run.jsonl = cfg.out / (norm + ".jsonl");
  run.svg = cfg.out / (norm + ".svg");
  MetricsLog log(run.jsonl, /*append=*/false);
  Variable in, out;  // the watched layer's input and output in the current training forward
  TrainerHooks hooks;
  hooks.after_backward = [&](int64_t update, double loss) {
    if (!in.defined() || !out.grad().defined() || !in.grad().defined()) return;
    if (in.dim() != 2)
      throw std::invalid_argument("grad probe: the watched layer's input has shape " + nl::shape_str(in.shape()) +
                                  "; the probe needs [N, H] rows");
    run.records.push_back(probe_record(update, loss, probe_stats(in.data(), out.grad(), in.grad())));
    log.write(run.records.back());
    in = out = Variable();  // release the step's activations
  };
  Trainer trainer(task, settings, hooks);
  nl::Module& layer = find_grad_probe_layer(trainer.model(), cfg.layer);
  layer.register_forward_hook([&](nl::Module&, const std::vector<Variable>& inputs, const Variable& output) {
    if (!nl::grad_enabled() || !output.requires_grad()) return;  // evaluation passes
    in = inputs.at(0);
    out = output;
    in.retain_grad();
    out.retain_grad();
  });
  try {
    trainer.run();
  } catch (const TrainingDiverged& e) {
    if (!cfg.quiet) std::cerr << "  " << norm << ": " << e.what() << "\n";
  }
  PlotSpec spec{norm + ": gradients at the norm layer, per row", "step", "batch average (log scale)",
                /*log_y=*/true};
  write_line_chart(run.svg, spec,
                   {series_of(run.records, "g_abs_mean", "abs(mean g)"),
                    series_of(run.records, "pred_abs_mean", "abs(ḡ)/σ"),
                    series_of(run.records, "dx_abs_mean", "abs(mean ∂ℓ/∂x)"), series_of(run.records, "g_var", "var g"),
                    series_of(run.records, "pred_var", "D_g/σ²"), series_of(run.records, "dx_var", "var ∂ℓ/∂x")});
  return run;
}
}  // namespace

std::vector<ProbeRun> run_grad_probe(Task& task, const json& settings, const ProbeConfig& cfg) {
  for (const auto& n : cfg.norms) nl::theory::require_variant(n);
  if (cfg.norms.empty()) throw std::invalid_argument("grad probe: no norm given");
  if (cfg.steps < 1) throw std::invalid_argument("--steps must be at least 1, got " + std::to_string(cfg.steps));
  create_out_folder(cfg.out);  // a clear error when --out is a file
  std::vector<ProbeRun> runs;
  std::vector<Series> cmp;
  for (const auto& n : cfg.norms) {
    if (!cfg.quiet) std::cerr << "probing " << n << ": " << cfg.steps << " steps\n";
    runs.push_back(probe_one(task, settings, cfg, n));
    cmp.push_back(series_of(runs.back().records, "dx_abs_mean", n));
  }
  write_line_chart(cfg.out / "mean-dx.svg",
                   PlotSpec{"abs(mean ∂ℓ/∂x) per row at the norm input", "step",
                            "batch average (log scale)", true},
                   cmp);
  return runs;
}

std::string format_probe_summary(const std::vector<ProbeRun>& runs) {
  auto avg = [](const std::vector<json>& recs, const char* f) { return field_mean(recs, f); };
  auto num = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return std::string(b);
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : runs)
    rows.push_back({r.norm, std::to_string(r.records.size()), num(avg(r.records, "x_sigma")),
                    num(avg(r.records, "g_abs_mean")), num(avg(r.records, "dx_abs_mean")),
                    num(avg(r.records, "pred_abs_mean")), num(avg(r.records, "g_var")), num(avg(r.records, "dx_var")),
                    num(avg(r.records, "pred_var"))});
  return markdown_table({"norm", "steps", "σ of x", "abs(mean g)", "abs(mean ∂ℓ/∂x)", "abs(ḡ)/σ", "var g",
                         "var ∂ℓ/∂x", "D_g/σ²"},
                        rows, {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right,
                               Align::Right, Align::Right, Align::Right});
}

}  // namespace nlapp
