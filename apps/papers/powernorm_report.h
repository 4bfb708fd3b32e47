#pragma once
// Shen et al. 2020 ("PowerNorm: Rethinking Batch Normalization in Transformers") at CPU scale: Table 1
// (MT) and Table 2 (LM) analogues with the paper's numbers and their verification status
// (../shared/docs/ni-pn-details.md §6), the batch-size ablation (the paper's Figure 5), and Figures 2-4
// from the batch-statistics probe. What `normlab reproduce powernorm` writes; docs/reproduce.md.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/experiment.h"
#include "probes/batch_stats_probe.h"
#include "report/claims.h"
#include "report/paper_table.h"

namespace nlapp {

/// The four norms of Tables 1-2 in the paper's row order: layernorm, batchnorm, powernorm-v, powernorm.
const std::vector<std::string>& powernorm_variants();

/// Row label: layernorm → "LN", batchnorm → "BN (released MaskSyncBatchNorm)", powernorm-v → "PN-V", powernorm → "PN".
std::string powernorm_row_label(const std::string& variant);

/// A paper number with its verification status as ni-pn-details.md §6 gives it: V verified, D derived
/// from verified facts, I inferred, U unverified (table not readable; digest memory).
struct PaperNumber {
  double value;
  char status;  ///< 'V', 'D', 'I' or 'U'
};

/// The paper's number for (column, variant), where column is "iwslt14", "wmt14" (BLEU, Table 1),
/// "ptb" or "wt103" (test PPL, Table 2); status 0 and NaN when the docs have none.
PaperNumber powernorm_paper(const std::string& column, const std::string& variant);

/// The paper cell text, e.g. "35.5 [U]"; "n/a" when the docs have no number.
std::string powernorm_paper_text(const PaperNumber& p);

/// The batch-size ablation's mini-batches (max_tokens) and their --update-freq, keeping 4,096 tokens per update.
const std::vector<std::pair<int64_t, int64_t>>& powernorm_ablation_batches();

/// Rows of Table 1 (columns iwslt14 ← ours "mt", wmt14 not run) or Table 2 (ptb ← ours "lm", wt103 not
/// run) from records tagged {"column": "mt"|"lm", "variant": norm, "seed": n}; `table` is 1 or 2.
std::vector<PaperRow> powernorm_table_rows(int table, const std::vector<RunRecord>& records);
/// The columns of Table 1 or 2 (ours named in the header).
std::vector<PaperColumn> powernorm_table_columns(int table);

/// Rows of the ablation table (columns "1024", "2048", "4096": our test BLEU) from records tagged
/// {"column": "mt", "max_tokens": n, "variant": norm}.
std::vector<PaperRow> powernorm_ablation_rows(const std::vector<RunRecord>& records);

/// The runs of `normlab reproduce powernorm` × seeds 1..N: Table 1 (mt multi30k, max_tokens 4096) and
/// the ablation's other batch sizes (1024 × 4, 2048 × 2), labelled "mt-tok<T>/<norm>-seed<n>" and tagged
/// {column "mt", variant, seed, max_tokens}, registered as powernorm/mt-tok<T>/<norm>/seed<n>; Table 2
/// (lm ptb), "lm-ptb/<norm>-seed<n>", registered as powernorm/lm-ptb/<norm>/seed<n>. BN runs as the
/// released MaskSyncBatchNorm (bn_released) where the task has that setting.
std::vector<ExperimentRun> powernorm_runs(bool table1, bool table2, bool ablation, int seeds, const std::string& data_bin);

/// The claims of Tables 1-2 in our two columns: "mt" (Multi30k, max_tokens 4096) with the direction of
/// the paper's IWSLT14 column, "lm" (PTB, lower PPL is better) with its PTB column: PN vs LN, LN vs BN,
/// PN-V vs BN, LN vs PN-V (derive_claims: the paper's numbers set who is better; IWSLT14 LN = PN-V makes
/// no claim).
std::vector<Claim> powernorm_claims();

/// The claims section (format_claims) from records tagged like the Table 1-2 runs.
std::string format_powernorm_claims(const std::vector<RunRecord>& records);

/// The probe runs behind Figures 2-4 (may be empty when not run).
struct PowerNormProbes {
  std::vector<BatchStatsRun> resnet;  ///< ResNet-20 / CIFAR-10, batchnorm
  std::vector<BatchStatsRun> mt;      ///< Transformer / Multi30k, batchnorm and powernorm-v
};

/// Figures 2 (batch vs running mean and variance: ResNet-BN vs Transformer-BN), 3 (gradient norms of μ_B and
/// σ²_B, same models) and 4 (Transformer: BN vs PN-V, variance distance and its gradient) as SVG files in
/// `out`, x = percent of the probed updates; returns the file names.
std::vector<std::string> write_powernorm_figures(const std::filesystem::path& out, const PowerNormProbes& probes);

/// The whole results.md: `setup` (budget, seeds), the reading that ran, Tables 1-2, the ablation, the
/// probe summary and the figure list.
std::string format_powernorm_report(const std::vector<RunRecord>& records, const PowerNormProbes& probes,
                                    const std::string& setup);

}  // namespace nlapp
