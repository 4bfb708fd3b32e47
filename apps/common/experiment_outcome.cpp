#include "common/experiment_outcome.h"

#include <fstream>
#include <iostream>
#include <stdexcept>

#include "common/output_listing.h"

namespace nlapp {

void finish_experiment(const std::filesystem::path& out, const std::vector<RunRecord>& records) {
  if (!reports_here(records)) return;  // --distributed: rank 0 writes and prints
  std::ifstream md(out / "results.md");
  std::cout << "\n" << md.rdbuf() << "\n" << written_listing(out) << "\n";
  if (const std::string e = failed_runs_error(records); !e.empty()) throw std::runtime_error(e);
}

}  // namespace nlapp
