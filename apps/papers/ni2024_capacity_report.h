#pragma once
// Ni et al. 2024's capacity experiment (the slides' Figure; ../shared/docs/ni-pn-details.md §5.1) as runs of
// the experiment runner and tables from their records: training accuracy on random labels (MNIST-RL,
// CIFAR-10-RL) of a linear classifier, a linear network, an LN-Net (LayerNorm) and LN-Nets with LN-G for
// each group count G, all of task lnnet's shape (panels a-b), and the Hessian measure H of each trained
// model (panels c-d; the task's "hessian" test metric). What `normlab reproduce ni2024-capacity` runs and
// writes and `normlab report` embeds (block ni2024/capacity).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/experiment.h"

namespace nlapp {

/// What the capacity experiment runs.
struct CapacityPlan {
  nlohmann::json base;              ///< resolved lnnet settings (config ← flags), without out/resume/device
  std::string config_source;        ///< the config file ("" = built-in defaults)
  std::vector<std::string> datasets{"mnist", "cifar10"};
  std::vector<int64_t> groups{1, 2, 4, 8, 16, 32, 64, 128};  ///< G of the LN-Net rows (1 = LayerNorm)
  int seeds = 3;
};

/// The plan of `config` (a name in apps/configs/lnnet/ or a path) with `flags`. Throws
/// std::invalid_argument when --data names one folder for several datasets, or a G does not divide the
/// width (naming G and the width).
CapacityPlan capacity_plan(const std::string& config, const std::map<std::string, std::string>& flags,
                           std::vector<std::string> datasets, std::vector<int64_t> groups, int seeds);

/// The runs: seeds × datasets × models (linear classifier, linear network, then G of plan.groups), labelled
/// "<dataset>-<model>-seed<N>", tagged {dataset, model, seed}, registered as
/// ni2024-capacity/<config>-<dataset>/<model>/seed<N> (model: linear-classifier, linear-network, G<n>).
std::vector<ExperimentRun> capacity_runs(const CapacityPlan& plan);

/// results.md's text (markdown): a header paragraph, then per dataset a table (model, group size, train
/// and test accuracy %, H, mean ± std over the finished seeds) and the slides' two claims judged over
/// seeds (report/claims.h): the LN-Net above the better linear baseline, and the best LN-G above LN.
std::string format_ni2024_capacity(const CapacityPlan& plan, const std::vector<RunRecord>& records);

/// train_acc_vs_groups.svg and hessian_vs_groups.svg (seed means against log2 G, one line per dataset)
/// into `out`; nothing while no LN-Net run has finished.
void write_capacity_figures(const std::filesystem::path& out, const CapacityPlan& plan,
                            const std::vector<RunRecord>& records);

}  // namespace nlapp
