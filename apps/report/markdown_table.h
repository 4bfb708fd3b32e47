#pragma once
// GitHub-flavoured markdown tables for experiment results, plus mean ± std formatting.
#include <string>
#include <vector>

namespace nlapp {

/// Column alignment, written into the separator row (`:---`, `:---:`, `---:`).
enum class Align { Left, Center, Right };

/// Builds a GitHub markdown table. `align` may be shorter than `header` (missing columns are
/// Left). Rows shorter than the header are padded with empty cells; a longer row throws
/// std::invalid_argument. Cells are padded to the column width (counted in UTF-8 code points) so
/// the source is readable too; `|` in a cell is escaped as `\|` and newlines become spaces.
/// Every line, including the last, ends with '\n'.
std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows,
                           const std::vector<Align>& align = {});

/// `v` with `precision` decimals ("%.*f"), or "—" for NaN (a result that does not exist).
std::string format_fixed(double v, int precision = 2);

/// Formats the mean and sample standard deviation (n-1) of `values` with `precision` decimals,
/// e.g. "86.41 ± 0.23". A single value prints without "±"; no values gives "n/a".
std::string format_mean_std(const std::vector<double>& values, int precision = 2);

/// Our cell of a results table from the finished seeds' `values`: format_mean_std, then " (n=K)" when
/// `show_n` and " (k diverged)" when `diverged` > 0; "diverged" when no seed finished but some diverged,
/// "—" when none ran.
std::string format_seeds(const std::vector<double>& values, int diverged, int precision, bool show_n);

/// Whether the seed counts of a table's cells (empty cells left out) differ, so that each cell should say
/// its n (format_seeds' show_n).
bool seed_counts_differ(const std::vector<std::size_t>& counts);

/// Number of UTF-8 code points in `s` (display width used for padding).
std::size_t utf8_length(const std::string& s);

}  // namespace nlapp
