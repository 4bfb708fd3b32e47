// `normlab report`: rebuilds the result tables, claim verdicts and curves from the results registry
// (engine/registry.h) without training anything, writes them beside the records
// (<registry>/<group>/.../results.md and SVGs) and rewrites the generated blocks of README.md and docs/*.md
// (report/doc_blocks.h). `--check` only compares the blocks and fails when one is stale.
#include <functional>
#include <iostream>
#include <map>

#include "common/command_registry.h"
#include "common/experiment_flags.h"
#include "engine/experiment.h"
#include "engine/precision_comparison.h"
#include "engine/registry.h"
#include "engine/task_registry.h"
#include "engine/task_reproduction.h"
#include "papers/ni2024_capacity_report.h"
#include "papers/ni2024_resnet_report.h"
#include "papers/powernorm_report.h"
#include "papers/xu2019_report.h"
#include "report/atomic_file.h"
#include "common/ln_theory.h"
#include "report/bench_records.h"
#include "report/registry_cost.h"
#include "report/doc_blocks.h"
#include "report/gpu_records.h"

namespace nlapp {
namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;

struct ReportArgs {
  std::string registry = "results";
  std::string docs_root = ".";
  bool check = false;
};

ExperimentOptions lookup_options(const ReportArgs& a) {
  ExperimentOptions opt;
  opt.out = "runs/report";  // run folders are consulted only for finished results.json (none in a fresh clone)
  opt.registry = a.registry;
  opt.dry = true;
  static std::ostringstream quiet;
  opt.log = &quiet;
  return opt;
}

// Xu et al. 2019: every column of the campaign (3 seeds, or as many as a record has), looked up.
struct XuReport {
  std::vector<XuColumn> columns = xu2019_columns({});
  std::vector<RunRecord> records;
  int seeds;
  explicit XuReport(const ReportArgs& a) : seeds(recorded_seeds(a.registry, "xu2019", 3)) {
    std::vector<ExperimentRun> runs = xu2019_runs(columns, xu2019_task_keys(), seeds);
    keep_column_precision(runs, lookup_options(a));
    records = run_experiment(runs, lookup_options(a));
  }
};

// Shen et al. 2020: Tables 1-2 (3 seeds, or as many as a record has), looked up.
struct PnReport {
  std::vector<RunRecord> records;
  int seeds;
  explicit PnReport(const ReportArgs& a) : seeds(recorded_seeds(a.registry, "powernorm", 3)) {
    records = run_experiment(powernorm_runs(true, true, false, seeds, "data-bin"), lookup_options(a));
  }
};

// A task's own reproduction (config and flags; by default 3 seeds of the LayerNorm family), looked up.
struct TaskReport {
  TaskInvocation inv;
  TaskReproduction what;
  std::vector<RunRecord> records;
  TaskReport(const ReportArgs& a, const std::string& task, const std::string& config,
             const std::map<std::string, std::string>& flags = {}, TaskReproduction asked = {}) {
    for (const auto& e : task_registry())
      if (e.name == task) inv.task = e.make();
    if (!inv.task) throw std::invalid_argument("report: task '" + task + "' is not built into this binary");
    inv.settings = resolve_task_settings(*inv.task, config, flags, &inv.config_source);
    what = {asked.seeds, checked_variants(*inv.task, inv.settings, asked.variants)};
    records = run_experiment(task_reproduction_runs(inv, what), lookup_options(a));
  }
};

// The same reproduction in float32 and with --bf16 (issue 26: results unchanged in substance), looked up.
struct PrecisionReport {
  TaskReport f32, bf16;
  PrecisionReport(const ReportArgs& a, const std::string& task, const std::string& config, TaskReproduction what)
      : f32(a, task, config, {}, what), bf16(a, task, config, {{"bf16", "true"}}, what) {}
  std::string table() const { return format_precision_comparison(f32.inv, f32.what, f32.records, bf16.records); }
};

void run(const ReportArgs& a) {
  // Without these the report would find nothing to rewrite or compare and say "0 blocks match".
  if (!fs::is_directory(a.registry))
    throw std::invalid_argument("results registry '" + a.registry + "' not found: run from the repository root " +
                                "(where results/ is) or pass --registry DIR");
  if (!fs::exists(fs::path(a.docs_root) / "README.md") && !fs::is_directory(fs::path(a.docs_root) / "docs"))
    throw std::invalid_argument("no README.md or docs/ under '" + a.docs_root + "': run from the repository root " +
                                "or pass --docs-root DIR");
  std::unique_ptr<XuReport> xu;
  std::unique_ptr<TaskReport> mnist1;
  std::unique_ptr<PnReport> pn;
  auto get_pn = [&]() -> PnReport& {
    if (!pn) pn = std::make_unique<PnReport>(a);
    return *pn;
  };
  auto get_xu = [&]() -> XuReport& {
    if (!xu) xu = std::make_unique<XuReport>(a);
    return *xu;
  };
  auto get_mnist1 = [&]() -> TaskReport& {
    if (!mnist1) mnist1 = std::make_unique<TaskReport>(a, "mnist", "one-epoch");
    return *mnist1;
  };
  // The blocks the docs may embed, by name.
  const std::map<std::string, std::function<std::string()>> blocks = {
      {"xu2019/tables", [&] { return format_xu2019_tables(get_xu().columns, get_xu().records, "#### "); }},
      {"xu2019/claims", [&] { return format_xu2019_claims(get_xu().columns, get_xu().records); }},
      {"powernorm/claims", [&] { return format_powernorm_claims(get_pn().records); }},
      {"mnist/one-epoch", [&] { return format_task_reproduction(get_mnist1().inv, get_mnist1().what, get_mnist1().records); }},
      {"ni2024/capacity", [&] {
         const CapacityPlan plan = capacity_plan("capacity-cpu", {}, {"mnist", "cifar10"}, CapacityPlan{}.groups, 3);
         return format_ni2024_capacity(plan, run_experiment(capacity_runs(plan), lookup_options(a)));
       }},
      {"ni2024/resnet", [&] {
         // 3 seeds, or as many as a record has (a campaign run with --seeds 5)
         const TaskReport r(a, "resnet-cifar", "cpu", {}, {recorded_seeds(a.registry, "resnet-cifar", 3),
                                                           ni2024_resnet_norms()});
         return format_ni2024_resnet(r.inv, r.what, r.records);
       }},
      {"precision/mnist/one-epoch", [&] { return PrecisionReport(a, "mnist", "one-epoch", {3, {}}).table(); }},
      {"precision/mt/multi30k", [&] { return PrecisionReport(a, "mt", "multi30k", {1, {"layernorm"}}).table(); }},
      {"bench/bf16", [&] { return format_bf16_bench_records(fs::path(a.registry) / "bench"); }},
      {"bench/float32/mnist", [&] { return format_float32_bench_records(fs::path(a.registry) / "bench", {"mnist"}); }},
      {"bench/float32/transformer", [&] {
         return format_float32_bench_records(fs::path(a.registry) / "bench", {"cls", "small", "iwslt"});
       }},
      {"ln-theory/merge-limit", [&] { return merge_limit_table({40, 80, 100, 150, 200}, 3); }},
      {"registry/cost", [&] { return format_registry_cost(a.registry); }},
      {"gpu/checks", [&] { return format_gpu_check_records(fs::path(a.registry) / "gpu"); }},
      {"gpu/bench", [&] { return format_gpu_bench_records(fs::path(a.registry) / "gpu"); }},
  };
  auto generate = [&](const std::string& name) {
    auto it = blocks.find(name);
    if (it == blocks.end()) {
      std::string names;
      for (const auto& [k, f] : blocks) names += (names.empty() ? "" : ", ") + k;
      throw std::invalid_argument("unknown report block '" + name + "' (known: " + names + ")");
    }
    return it->second();
  };
  const auto docs = update_doc_blocks(doc_files(a.docs_root), generate, a.check);
  size_t stale = 0;
  for (const auto& b : docs)
    if (b.changed) {
      ++stale;
      std::cout << (a.check ? "stale: " : "rewritten: ") << b.file.string() << " block " << b.name << "\n";
    }
  if (a.check) {
    if (stale)
      throw std::runtime_error(std::to_string(stale) + " generated block(s) differ from the registry: run `normlab report` "
                               "in the repository root and commit the result");
    std::cout << docs.size() << " generated block(s) match the registry (" << a.registry << ")\n";
    return;
  }
  // The full reports beside the records.
  const fs::path root = a.registry;
  XuReport& x = get_xu();
  write_file_atomic(root / "xu2019" / "results.md",
                    format_xu2019_report(x.columns, x.records, "Setup: seeds 1-" + std::to_string(x.seeds) +
                                                                   " (a cell averages those that finished); each config's "
                                                                   "own run length."));
  write_xu2019_figures(root / "xu2019", x.columns, x.records);
  write_file_atomic(root / "powernorm" / "results.md",
                    format_powernorm_report(get_pn().records, {}, "Setup: seeds 1-" + std::to_string(get_pn().seeds) +
                                                                  " (a cell averages those that finished); each config's own "
                                                                  "run length; parts table1, table2 (the registry's records; "
                                                                  "probes not included)."));
  TaskReport& m = get_mnist1();
  write_task_reproduction(m.inv, m.what, root / "mnist" / registry_column(m.inv), m.records, /*with_json=*/false);
  std::cout << "written: " << (root / "xu2019").string() << "/results.md and figures, " << (root / "powernorm").string()
            << "/results.md, "
            << (root / "mnist" / registry_column(m.inv)).string() << "/results.md and curves; " << docs.size()
            << " generated block(s) in README.md and docs/, " << stale << " rewritten\n";
}

void setup(CLI::App& app) {
  auto* sub = app.add_subcommand("report",
                                 "Rebuild result tables, claim verdicts and curves from the results registry (no training); "
                                 "rewrite the generated blocks of README.md and docs/");
  auto a = std::make_shared<ReportArgs>();
  sub->add_option("--registry", a->registry, "The results registry (<DIR>/<group>/<column>/<variant>/seed<N>.json)")
      ->capture_default_str();
  sub->add_option("--docs-root", a->docs_root, "Folder holding README.md and docs/ (the repository root)")->capture_default_str();
  sub->add_flag("--check", a->check, "Only compare the generated blocks with the registry; fail when one is stale");
  sub->callback([a] { run(*a); });
}

CommandRegistrar reg{{"report", 25, setup}};
}  // namespace
}  // namespace nlapp
