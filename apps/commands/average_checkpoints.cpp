// `normlab average-checkpoints`: fairseq's scripts/average_checkpoints.py for normlab checkpoints. Picks the
// newest N epoch or update checkpoints of a run folder (or takes the files given), averages their model
// weights (src/optim/average_checkpoints.h) and writes a model checkpoint atomically.
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/command_registry.h"
#include "optim/average_checkpoints.h"

namespace nlapp {
namespace {
namespace fs = std::filesystem;

struct AverageArgs {
  std::vector<std::string> inputs;
  std::string output;
  int64_t num_epoch = 0, num_update = 0, upper_bound = -1;
};

std::vector<fs::path> select_inputs(const AverageArgs& a) {
  const bool select = a.num_epoch > 0 || a.num_update > 0;
  if (!select) {
    if (a.upper_bound >= 0)
      throw std::runtime_error("--checkpoint-upper-bound needs --num-epoch-checkpoints or --num-update-checkpoints");
    return {a.inputs.begin(), a.inputs.end()};
  }
  if (a.inputs.size() != 1)
    throw std::runtime_error("--num-epoch-checkpoints/--num-update-checkpoints take one --inputs folder (the run's "
                             "--out), got " + std::to_string(a.inputs.size()) + " paths");
  return a.num_epoch > 0 ? nl::last_n_checkpoints(a.inputs[0], a.num_epoch, nl::CheckpointSeries::kEpoch, a.upper_bound)
                         : nl::last_n_checkpoints(a.inputs[0], a.num_update, nl::CheckpointSeries::kUpdate, a.upper_bound);
}

void run(const AverageArgs& a) {
  const auto inputs = select_inputs(a);
  const fs::path output(a.output);
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::equivalent(in, output, ec))
      throw std::runtime_error("--output '" + a.output + "' is one of the inputs; write the average to a new file");
  }
  std::cout << "averaging " << inputs.size() << " checkpoint(s):";
  for (const auto& in : inputs) std::cout << " " << in.string();
  std::cout << "\n";
  const nl::AveragedModel m = nl::average_model_checkpoints(inputs);
  nl::save_checkpoint(output, m.tensors, m.meta);
  std::cout << "wrote " << output.string() << " (" << m.tensors.size() << " model tensors)\n";
}

void setup(CLI::App& app) {
  auto args = std::make_shared<AverageArgs>();
  auto* cmd = app.add_subcommand("average-checkpoints",
                                 "Average the model weights of several checkpoints (fairseq's average_checkpoints.py)");
  cmd->add_option("--inputs", args->inputs,
                  "checkpoint files, newest first (settings are taken from the first); or, with --num-*-checkpoints, "
                  "the run's --out folder")
      ->required();
  cmd->add_option("--output", args->output, "the averaged model checkpoint to write")->required();
  auto* ne = cmd->add_option("--num-epoch-checkpoints", args->num_epoch,
                             "average the newest N checkpoint{epoch}.safetensors of the folder, by epoch number")
                 ->check(CLI::PositiveNumber);
  auto* nu = cmd->add_option("--num-update-checkpoints", args->num_update,
                             "average the newest N checkpoint_{epoch}_{update}.safetensors of the folder, by update")
                 ->check(CLI::PositiveNumber);
  ne->excludes(nu);
  cmd->add_option("--checkpoint-upper-bound", args->upper_bound,
                  "with --num-*-checkpoints: ignore checkpoints whose epoch (or update) number is above this")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([args] { run(*args); });
}

CommandRegistrar reg{{"average-checkpoints", 60, setup}};
}  // namespace
}  // namespace nlapp
