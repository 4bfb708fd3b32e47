#include "optim/average_checkpoints.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <regex>
#include <stdexcept>

namespace nl {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
// A NaN or an infinity in one input makes that tensor's average NaN or infinite: refuse it, naming both.
void require_finite(const std::vector<double>& v, const std::string& key, const std::string& source) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw std::invalid_argument("averaging checkpoints: tensor '" + key + "' in '" + source + "' holds " +
                                  (std::isnan(v[i]) ? "a NaN" : "an infinity") + " (element " + std::to_string(i) +
                                  "): that checkpoint's weights diverged; leave it out of the inputs");
}
}  // namespace

void TensorAverager::add(const TensorMap& m, const std::string& source) {
  const auto name = [&](const std::string& s) { return "'" + s + "'"; };
  if (count_ == 0) {
    first_source_ = source;
    for (const auto& [k, t] : m) {
      Entry e{t.dtype(), t.shape(), {}, {}};
      if (t.dtype() == DType::Int64) e.ints = t.to_vector<int64_t>();
      else require_finite(e.sum = t.to_vector<double>(), k, source);
      entries_.emplace(k, std::move(e));
    }
    ++count_;
    return;
  }
  for (const auto& [k, t] : m)
    if (!entries_.count(k))
      throw std::invalid_argument("averaging checkpoints: tensor '" + k + "' is in " + name(source) + " but not in " +
                                  name(first_source_) + "; only checkpoints of the same model can be averaged");
  for (auto& [k, e] : entries_) {
    auto it = m.find(k);
    if (it == m.end())
      throw std::invalid_argument("averaging checkpoints: tensor '" + k + "' is in " + name(first_source_) +
                                  " but not in " + name(source) + "; only checkpoints of the same model can be averaged");
    const Tensor& t = it->second;
    if (t.dtype() != e.dtype || t.shape() != e.shape)
      throw std::invalid_argument("averaging checkpoints: tensor '" + k + "' is " + dtype_name(t.dtype()) + " " +
                                  shape_str(t.shape()) + " in " + name(source) + " but " + dtype_name(e.dtype) + " " +
                                  shape_str(e.shape) + " in " + name(first_source_) +
                                  "; only checkpoints of the same model can be averaged");
    if (e.dtype == DType::Int64) {
      const auto v = t.to_vector<int64_t>();
      for (std::size_t i = 0; i < v.size(); ++i) e.ints[i] += v[i];
      continue;
    }
    const auto v = t.to_vector<double>();
    require_finite(v, k, source);
    for (std::size_t i = 0; i < v.size(); ++i) e.sum[i] += v[i];
  }
  ++count_;
}

TensorMap TensorAverager::result() const {
  if (count_ == 0) throw std::logic_error("TensorAverager::result: no tensor map was added");
  TensorMap out;
  for (const auto& [k, e] : entries_) {
    if (e.dtype == DType::Int64) {  // floor division, as Python's // in fairseq's average_checkpoints.py
      std::vector<int64_t> mean = e.ints;
      const auto n = static_cast<int64_t>(count_);
      for (int64_t& x : mean) x = x / n - ((x % n != 0 && x < 0) ? 1 : 0);
      out[k] = Tensor::from_vector<int64_t>(mean, e.shape);
      continue;
    }
    std::vector<double> mean = e.sum;
    for (double& x : mean) x /= static_cast<double>(count_);
    out[k] = Tensor::from_vector<double>(mean, e.shape).to(e.dtype);
  }
  return out;
}

TensorMap average_tensor_maps(const std::vector<TensorMap>& maps) {
  if (maps.empty()) throw std::invalid_argument("average_tensor_maps: no tensor maps given");
  TensorAverager avg;
  for (std::size_t m = 0; m < maps.size(); ++m) avg.add(maps[m], "map " + std::to_string(m));
  return avg.result();
}

namespace {
// The tensors of checkpoint `ck` (read from `p`) whose name starts with `prefix`; throws when there is none.
TensorMap select_prefix(Checkpoint& ck, const std::string& prefix, const fs::path& p) {
  TensorMap sel;
  for (auto& [k, t] : ck.tensors)
    if (k.compare(0, prefix.size(), prefix) == 0) sel.emplace(k, std::move(t));
  if (sel.empty())
    throw std::invalid_argument("average_checkpoints: checkpoint '" + p.string() +
                                "' has no tensor whose name starts with '" + prefix + "'");
  return sel;
}
}  // namespace

TensorMap average_checkpoints(const std::vector<fs::path>& paths, const std::string& prefix) {
  if (paths.empty()) throw std::invalid_argument("average_checkpoints: no checkpoint paths given");
  TensorAverager avg;
  for (const auto& p : paths) {
    Checkpoint ck = load_checkpoint(p);
    avg.add(select_prefix(ck, prefix, p), p.string());
  }
  return avg.result();
}

std::vector<fs::path> last_n_checkpoints(const fs::path& dir, int64_t n, CheckpointSeries series, int64_t upper_bound) {
  if (n < 1) throw std::invalid_argument("last_n_checkpoints: need at least 1 checkpoint, got n = " + std::to_string(n));
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error("checkpoint directory '" + dir.string() +
                             "' does not exist or is not a directory; give the run's --out folder");
  const bool by_epoch = series == CheckpointSeries::kEpoch;
  const std::regex pattern(by_epoch ? R"(checkpoint(\d+)\.safetensors)" : R"(checkpoint_\d+_(\d+)\.safetensors)");
  const char* pattern_text = by_epoch ? "checkpoint{epoch}.safetensors" : "checkpoint_{epoch}_{update}.safetensors";
  std::vector<std::pair<int64_t, std::string>> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    std::smatch m;
    if (!std::regex_match(f, m, pattern)) continue;
    int64_t key = 0;
    const std::string digits = m[1].str();
    if (std::from_chars(digits.data(), digits.data() + digits.size(), key).ec != std::errc()) continue;  // > 2^63
    if (upper_bound >= 0 && key > upper_bound) continue;
    found.emplace_back(key, f);
  }
  std::sort(found.rbegin(), found.rend());  // newest first (ties: by name, as fairseq's sorted tuples)
  if (static_cast<int64_t>(found.size()) < n) {
    std::string list;
    for (const auto& [k, f] : found) list += (list.empty() ? "" : ", ") + f;
    throw std::runtime_error("found " + std::to_string(found.size()) + " checkpoint(s) named " + pattern_text + " in '" +
                             dir.string() + "'" +
                             (upper_bound >= 0 ? " up to " + std::string(by_epoch ? "epoch " : "update ") +
                                                     std::to_string(upper_bound)
                                               : std::string()) +
                             (list.empty() ? std::string() : " (" + list + ")") + " but " + std::to_string(n) +
                             " were asked for; ask for fewer or train longer");
  }
  std::vector<fs::path> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(dir / found[static_cast<std::size_t>(i)].second);
  return out;
}

AveragedModel average_model_checkpoints(const std::vector<fs::path>& inputs) {
  if (inputs.empty()) throw std::invalid_argument("average_model_checkpoints: no checkpoint paths given");
  TensorAverager avg;
  json first;
  json from = json::array();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Checkpoint ck = load_checkpoint(inputs[i]);  // one checkpoint in memory at a time
    const json& meta = ck.meta;
    if (!meta.is_object() || !meta.contains("task") || !meta["task"].is_string())
      throw std::runtime_error("checkpoint '" + inputs[i].string() +
                               "' has no \"task\" in its normlab metadata; average checkpoints written by `normlab train`");
    if (i == 0) {
      if (!meta.contains("settings"))
        throw std::runtime_error("checkpoint '" + inputs[0].string() +
                                 "' has no \"settings\" in its normlab metadata; average checkpoints written by `normlab train`");
      first = meta;
    } else if (meta["task"] != first["task"]) {
      throw std::runtime_error("checkpoint '" + inputs[i].string() + "' belongs to task '" +
                               meta["task"].get<std::string>() + "' but '" + inputs[0].string() + "' to task '" +
                               first["task"].get<std::string>() + "'; average checkpoints of one run");
    }
    avg.add(select_prefix(ck, "model.", inputs[i]), inputs[i].string());
    from.push_back(inputs[i].filename().string());
  }
  AveragedModel out;
  out.tensors = avg.result();
  out.meta = {{"format", "normlab-model-v2"}, {"task", first["task"]}, {"settings", first["settings"]}, {"averaged_from", from}};
  return out;
}

}  // namespace nl
