// Ni et al. 2024's ResNet-without-ReLU table from the registry's records (ni2024_resnet_report.h).
#include "papers/ni2024_resnet_report.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/trainer_settings.h"
#include "report/claims.h"
#include "report/markdown_table.h"
#include "report/paper_numbers.h"

namespace nlapp {
namespace {
using json = nlohmann::json;

// The slides' column of a metric ("train_acc" / "test_acc": the keys of the task's test results).
std::string slides_column(const std::string& metric) {
  return metric == "train_acc" ? "resnet-cifar-train" : "resnet-cifar-test";
}

// The finished (done or diverged) records of `variant`.
std::vector<const RunRecord*> finished_of(const std::vector<RunRecord>& records, const std::string& variant) {
  std::vector<const RunRecord*> out;
  for (const auto& o : records)
    if (o.run.tags.value("variant", std::string()) == variant &&
        (o.status == RunStatus::Done || o.status == RunStatus::Diverged))
      out.push_back(&o);
  return out;
}

ClaimCell cell_of(const std::vector<RunRecord>& records, const std::string& variant, const std::string& metric) {
  ClaimCell c;
  for (const RunRecord* o : finished_of(records, variant)) {
    if (o->status == RunStatus::Diverged)
      ++c.diverged;
    else
      c.values.push_back(o->test_metric(metric));
  }
  return c;
}

// The claims of the slides' order: each norm of `variants` against the next one of the order present.
std::vector<Claim> order_claims(const std::vector<std::string>& variants) {
  std::vector<std::string> present;
  for (const auto& n : ni2024_resnet_norms())
    if (std::find(variants.begin(), variants.end(), n) != variants.end()) present.push_back(n);
  std::vector<Comparison> pairs;
  for (size_t i = 0; i + 1 < present.size(); ++i)
    pairs.push_back({present[i] + "-vs-" + present[i + 1], "slides' order", present[i], present[i + 1]});
  const std::vector<ClaimColumn> columns{{"train_acc", "train acc %", true}, {"test_acc", "test acc %", true}};
  return derive_claims(
      pairs, columns,
      [](const std::string& metric, const std::string& v) { return paper_number("ni2024", slides_column(metric), v); },
      [](const std::string&, const std::string&) { return false; });
}
}  // namespace

std::vector<std::string> ni2024_resnet_norms() { return {"lng", "groupnorm", "layernorm", "batchnorm", "instancenorm"}; }

std::string format_ni2024_resnet(const TaskInvocation& inv, const TaskReproduction& r,
                                 const std::vector<RunRecord>& records) {
  const json& s = inv.settings;
  std::string data;
  std::vector<std::vector<std::string>> rows;
  for (const auto& v : r.variants) {
    const ClaimCell train = cell_of(records, v, "train_acc"), test = cell_of(records, v, "test_acc");
    double seconds = 0, epochs = std::nan("");
    const auto done = finished_of(records, v);
    for (const RunRecord* o : done) {
      if (data.empty()) data = o->data();
      if (o->status != RunStatus::Done) continue;
      seconds += o->result.value("train_seconds", 0.0);
      epochs = o->result.value("epochs", std::nan(""));
    }
    const size_t ok = train.values.size();
    rows.push_back({v, ok ? format_mean_std(train.values) : "—", ok ? format_mean_std(test.values) : "—",
                    format_fixed(paper_number("ni2024", "resnet-cifar-train", v)),
                    format_fixed(paper_number("ni2024", "resnet-cifar-test", v)),
                    std::to_string(train.diverged) + "/" + std::to_string(done.size()),
                    ok ? format_fixed(epochs, 0) : "—", ok ? format_fixed(seconds / 60.0 / (double)ok, 1) : "—"});
  }
  std::ostringstream md;
  md << "ResNet-" << s.at("depth") << " with every ReLU removed (task `resnet-cifar`), G = " << s.at("groups")
     << " for groupnorm and lng (LN-G-Position). Data: " << (data.empty() ? "(no run finished yet)" : data) << ". "
     << s.at("optimizer").get<std::string>() << " lr " << s.at("lr") << " (" << schedule_summary(s) << "), batch "
     << s.at("batch_size") << ", clip " << s.at("clip_norm") << ", augment " << s.at("augment") << "; up to " << r.seeds
     << " seed(s), mean ± std over the finished ones. Train and test accuracy (%) of the best-validation weights; train "
     << "accuracy on the whole training subset in eval mode. Settings: "
     << (inv.config_source.empty() ? "built-in defaults" : "config `" + std::filesystem::path(inv.config_source).stem().string() + "`")
     << " (each run's config.json). The slides give no epochs, depth or groups; minutes are each run's own training "
        "time on whatever shared the machine (compare speed with `normlab bench`).\n\n"
     << markdown_table({"norm", "train acc %", "test acc %", "slides train %", "slides test %", "diverged", "epochs",
                        "minutes / run"},
                       rows,
                       {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right,
                        Align::Right})
     << "\n";
  const std::vector<Claim> claims = order_claims(r.variants);
  if (claims.empty()) {
    md << "The slides' order LN-G > GN > LN > BN > IN is not judged: fewer than two of its five norms were asked for.\n";
    return md.str();
  }
  md << format_claims("Ni et al. 2024, the slides' order LN-G > GN > LN > BN > IN", claims,
                      [&](const Claim& c, const std::string& v) { return cell_of(records, v, c.column); },
                      [](const std::string&) { return 2; });
  return md.str();
}

}  // namespace nlapp
