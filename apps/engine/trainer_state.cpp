#include "engine/trainer_state.h"

#include <fstream>
#include <stdexcept>

#include "autograd/functions.h"

namespace nlapp {
using json = nlohmann::json;

json Trainer::State::to_json() const {
  return {{"epoch", epoch},         {"next_batch", next_batch}, {"updates", updates},
          {"best", std::isnan(best) ? json() : json(best)}, {"best_epoch", best_epoch},
          {"best_update", best_update}, {"loss_acc", loss_acc},   {"loss_n", loss_n},
          {"finished", finished},   {"train_loss", train_loss}, {"valid_curve", valid_curve},
          {"last_valid_pos", last_valid_pos}, {"train_seconds", train_seconds}};
}

Trainer::State Trainer::State::from_json(const json& j, const std::string& file) {
  State s;
  try {
    s.epoch = j.at("epoch");
    s.next_batch = j.at("next_batch");
    s.updates = j.at("updates");
    s.best = j.at("best").is_null() ? std::nan("") : j.at("best").get<double>();
    s.best_epoch = j.at("best_epoch");
    s.best_update = j.at("best_update");
    s.loss_acc = j.at("loss_acc");
    s.loss_n = j.at("loss_n");
    s.finished = j.at("finished");
    s.train_loss = j.at("train_loss").get<decltype(s.train_loss)>();
    s.valid_curve = j.at("valid_curve").get<decltype(s.valid_curve)>();
    s.last_valid_pos = j.at("last_valid_pos");
    s.train_seconds = j.value("train_seconds", 0.0);  // absent in checkpoints written before 2026-11-26
  } catch (const json::exception& e) {
    throw std::runtime_error("cannot resume from " + file + ": its training state is incomplete (" + e.what() +
                             "); start a new run in another --out, or delete the file");
  }
  return s;
}

void Trainer::State::check_possible(int64_t epoch_size, const std::string& file) const {
  std::string why;
  if (epoch < 0 || updates < 0 || loss_n < 0 || best_update < 0 || train_seconds < 0)
    why = "a negative count (epoch " + std::to_string(epoch) + ", updates " + std::to_string(updates) + ")";
  else if (next_batch < 0 || next_batch > epoch_size)
    why = "batch " + std::to_string(next_batch) + " of an epoch of " + std::to_string(epoch_size) + " batches";
  else if (best_update > updates)
    why = "its best at update " + std::to_string(best_update) + ", after its last update " + std::to_string(updates);
  else if (!std::isfinite(loss_acc))
    why = "a non-finite running loss";
  if (!why.empty())
    throw std::runtime_error("cannot resume from " + file + ": its training state is impossible (" + why +
                             "), so the file is damaged; restore it, or start the run again with --overwrite");
}

std::string first_non_finite_tensor(const nl::TensorMap& tensors) {
  nl::NoGradGuard ng;
  for (const auto& [name, t] : tensors)
    if (nl::is_floating(t.dtype()) && t.numel() > 0 && !std::isfinite(nl::sum(nl::affine(t, 0.0, 0.0)).item()))
      return name;
  return "";
}

json sound_results(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return nullptr;
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("test") || !j["test"].is_object() || j["test"].empty()) return nullptr;
  if (!j.contains("best_valid") || !j["best_valid"].is_number() || !std::isfinite(j["best_valid"].get<double>()))
    return nullptr;
  for (const auto& [k, v] : j["test"].items())
    if (!v.is_number() || !std::isfinite(v.get<double>())) return nullptr;
  return j;
}

}  // namespace nlapp
