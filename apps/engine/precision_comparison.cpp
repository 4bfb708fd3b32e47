#include "engine/precision_comparison.h"

#include <cmath>
#include <cstdio>

#include "report/markdown_table.h"

namespace nlapp {
namespace {

// The finished records of one variant: their test metric, training minutes and items/s.
struct Cell {
  std::vector<double> metric, minutes, rate;
};

Cell cell_of(const std::vector<RunRecord>& records, const std::string& variant, const std::string& metric) {
  Cell c;
  for (const RunRecord& r : records) {
    if (r.status != RunStatus::Done || r.run.tags.value("variant", std::string()) != variant) continue;
    const double m = r.test_metric(metric);
    if (std::isnan(m)) continue;
    c.metric.push_back(m);
    c.minutes.push_back(r.result.value("train_seconds", NAN) / 60.0);
    c.rate.push_back(r.result.value("items_per_s", NAN));
  }
  return c;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / (double)v.size();
}

std::string with_n(const std::vector<double>& v) {
  return v.empty() ? "not run" : format_mean_std(v) + " (n=" + std::to_string(v.size()) + ")";
}

}  // namespace

std::string format_precision_comparison(const TaskInvocation& inv, const TaskReproduction& what,
                                        const std::vector<RunRecord>& float32, const std::vector<RunRecord>& bf16) {
  const auto& info = inv.task->info();
  const std::string metric = info.reported_metric();
  std::vector<std::vector<std::string>> rows;
  for (const std::string& v : what.variants) {
    const Cell a = cell_of(float32, v, metric), b = cell_of(bf16, v, metric);
    const bool both = !a.metric.empty() && !b.metric.empty();
    char diff[32] = "—";
    if (both) {
      const double d = mean_of(b.metric) - mean_of(a.metric);
      std::snprintf(diff, sizeof diff, "%+.2f", std::fabs(d) < 0.005 ? 0.0 : d);  // no "-0.00"
    }
    rows.push_back({v, with_n(a.metric), with_n(b.metric), diff,
                    format_fixed(mean_of(a.minutes), 1) + " / " + format_fixed(mean_of(b.minutes), 1),
                    format_fixed(mean_of(a.rate), 0) + " / " + format_fixed(mean_of(b.rate), 0)});
  }
  std::string out = "Task `" + info.name + "`, config `" + registry_column(inv) + "` (float32) against `" +
                    registry_column(inv) + "+bf16` (--bf16), test " + metric + ", up to " +
                    std::to_string(what.seeds) + " seed(s) each. Train minutes and throughput are each record's own " +
                    "(results.json): runs that shared the machine with other work are slower, so compare speed with " +
                    "`normlab bench --bf16`, not here.\n\n";
  out += markdown_table({"variant", "float32 test " + metric, "bf16 test " + metric, "bf16 − float32",
                         "train min float32 / bf16", info.unit + "/s float32 / bf16"},
                        rows, {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right});
  return out;
}

}  // namespace nlapp
