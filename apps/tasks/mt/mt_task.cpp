#include "tasks/mt/mt_task.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <stdexcept>

#include "autograd/functions.h"
#include "data/metrics/bleu.h"
#include "engine/norm_settings.h"
#include "engine/run_device.h"
#include "nn/transformer/transformer.h"
#include "optim/average_checkpoints.h"
#include "optim/checkpoint.h"
#include "report/atomic_file.h"
#include "report/paper_numbers.h"
#include "tasks/mt/mt_batches.h"
#include "tasks/mt/mt_generate.h"
#include "tasks/transformer_settings.h"

namespace nlapp {
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// Token-weighted label-smoothed loss and NLL of a split under teacher forcing.
struct SplitLoss {
  double loss = 0, nll = 0;
  int64_t tokens = 0;
};

class MtTask : public Task {
 public:
  const TaskInfo& info() const override {
    static const TaskInfo i = [] {
      TaskInfo t{"mt", "Transformer machine translation (fairseq recipe) on a prepared corpus", "tok",
                 "loss", false, "Xu et al. 2019, Tables 1-4 (MT columns; WMT14/IWSLT, bigger models)",
                 "bleu", "the average of the last --num-epoch-checkpoints epoch checkpoints, beam search"};
      t.bench_steps = 10;
      return t;
    }();
    return i;
  }

  std::vector<OptionSpec> settings() const override {
    std::vector<OptionSpec> v = norm_settings("layernorm", 2.0);
    for (auto& t : transformer_settings()) v.push_back(t);
    v.push_back(option("data", OptKind::String, "data-bin/multi30k",
                       "Prepared corpus folder (normlab data prepare multi30k|iwslt14|iwslt15 --out DIR)"));
    v.push_back(option("label_smoothing", OptKind::Float, 0.1, "Label smoothing of the cross-entropy (Szegedy et al. 2016)", 0, 0.99));
    v.push_back(option("beam", OptKind::Int, 5, "Beam size of the final test translation", 1, 1000));
    v.push_back(option("lenpen", OptKind::Float, 1.0, "Length penalty exponent of beam search (fairseq --lenpen)", -10, 10));
    v.push_back(option("max_len_a", OptKind::Float, 0.0, "Output length limit a*src_len + b: a", 0, 100));
    v.push_back(option("max_len_b", OptKind::Int, 200, "Output length limit a*src_len + b: b", 0, 1e6));
    v.push_back(option("gen_batch_size", OptKind::Int, 128, "Sentences per beam-search batch", 1, 1e6));
    v.push_back(option("num_epoch_checkpoints", OptKind::Int, 3,
                       "Final test: average the last N checkpoint{epoch} files (0: use checkpoint_best)", 0, 1e6));
    for (auto& o : token_batch_settings(8000, "synthetic shared vocabulary size", "tokens per sentence and side"))
      v.push_back(o);
    return v;
  }

  json trainer_defaults() const override {
    return {{"optimizer", "adamw"},       {"adam_betas", "(0.9, 0.98)"}, {"lr", 1e-3},
            {"lr_scheduler", "inverse_sqrt"}, {"warmup_updates", 500},   {"warmup_init_lr", 1e-7},
            {"weight_decay", 1e-4},       {"max_epoch", 10},             {"log_interval", 10}};
  }

  void setup(const json& s) override {
    generation_options(s).validate();  // a test search that cannot run is refused before training, not after
    const fs::path dir = s.at("data").get<std::string>();
    if (!corpus_ || corpus_->dir != dir) corpus_ = MtCorpus::load(dir);
    max_tokens_ = s.at("max_tokens").get<int64_t>();
    seed_ = (uint64_t)s.at("seed").get<int64_t>();
    max_src_ = s.at("max_source_positions").get<int64_t>();
    max_tgt_ = s.at("max_target_positions").get<int64_t>();
    label_smoothing_ = s.at("label_smoothing").get<double>();
    plans_.clear();
    for (const auto& [name, sp] : corpus_->splits) plans_[name] = plan_mt_batches(sp, max_tokens_, max_src_, max_tgt_);
    epoch_cached_ = UINT64_MAX;
  }

  std::string data_summary() const override {
    std::string s = corpus_->dir.filename().string() + " " + corpus_->src_lang + "-" + corpus_->tgt_lang + " (";
    for (const char* n : {"train", "valid", "test"})
      if (corpus_->has(n)) s += std::string(n) + " " + std::to_string(corpus_->split(n).size()) + ", ";
    return s + "vocab " + std::to_string(corpus_->src_dict.size()) + "/" + std::to_string(corpus_->tgt_dict.size()) +
           ", " + corpus_->subword + ")";
  }

  std::shared_ptr<nl::Module> build_model(const json& s) override {
    // Without setup() (normlab bench) the vocabulary is the synthetic --bench-vocab.
    const int64_t vs = corpus_ ? corpus_->src_dict.size() : s.at("bench_vocab").get<int64_t>();
    const int64_t vt = corpus_ ? corpus_->tgt_dict.size() : s.at("bench_vocab").get<int64_t>();
    return std::make_shared<nl::TransformerModel>(transformer_config(s, norm_options(s), vs, vt));
  }

  int64_t epoch_size(uint64_t) const override { return (int64_t)plan("train").batches.size(); }

  std::unique_ptr<TaskBatch> train_batch(uint64_t epoch, int64_t index) const override {
    if (epoch_cached_ != epoch) {
      order_ = nl::data::shuffled_batches(plan("train"), seed_, (int64_t)epoch + 1);
      epoch_cached_ = epoch;
    }
    return std::make_unique<MtBatch>(collate_mt(corpus_->split("train"), order_.at((size_t)index)));
  }

  nl::Variable loss(nl::Module& model, const TaskBatch& b) const override {
    const auto& mb = static_cast<const MtBatch&>(b);
    nl::Variable logits = static_cast<nl::TransformerModel&>(model).forward(mb.src, mb.prev);
    const int64_t V = logits.size(-1);
    return nl::cross_entropy(nl::reshape(logits, {-1, V}), mb.target.reshape({-1}), label_smoothing_,
                             nl::data::Dictionary::kPad);
  }

  Metrics evaluate(nl::Module& model, const std::string& split) const override {
    SplitLoss l = split_loss(static_cast<nl::TransformerModel&>(model), split);
    return {{"loss", l.loss}, {"nll_loss", l.nll}, {"ppl", std::exp(l.nll)}};
  }

  Metrics final_test(nl::Module& model, const nl::StateDict& best, const json& s) override {
    auto& m = static_cast<nl::TransformerModel&>(model);
    const fs::path out = s.at("out").get<std::string>();
    Metrics r;
    model.load_state_dict(averaged_weights(out, s.at("num_epoch_checkpoints").get<int64_t>(), best, &r));
    for (const auto& [k, v] : evaluate(model, "test")) r[k] = v;
    Translations t = translate_split(m, *corpus_, "test", generation_options(s), s.at("gen_batch_size").get<int64_t>());
    std::string text;
    for (const auto& h : t.text) text += h + "\n";
    write_file_atomic(out / "generate-test.txt", text);
    nl::metrics::BleuOptions bo;
    bo.tokenize = nl::metrics::parse_bleu_tokenize(corpus_->bleu_tokenize());
    r["bleu"] = nl::metrics::corpus_bleu(t.text, corpus_->references("test"), bo).score;
    r["sentences_per_s"] = t.sentences_per_second();
    return r;
  }

  double paper_reference(const json& s) const override {
    return paper_number("xu2019", corpus_ ? corpus_->src_lang + "-" + corpus_->tgt_lang : "", s.at("norm").get<std::string>());
  }

  std::vector<std::pair<std::string, double>> paper_columns(const json& s) const override {
    const std::string n = s.at("norm").get<std::string>();
    return {{"paper En-De (WMT14, big)", paper_number("xu2019", "en-de", n)},
            {"paper De-En (IWSLT14)", paper_number("xu2019", "de-en", n)},
            {"paper En-Vi (IWSLT15)", paper_number("xu2019", "en-vi", n)},
            {"Ni et al. slides De-En (IWSLT14)", paper_number("ni2024", "iwslt14-de-en", n)}};
  }

  std::pair<std::string, std::string> pytorch_bench(const json& s) const override {
    // The PyTorch twin has two of the issue's shapes: small (the multi30k config) and iwslt.
    auto g = [&](const char* k) { return s.at(k).get<int64_t>(); };
    std::string shape;
    if (g("d_model") == 256 && g("ffn_dim") == 1024 && g("n_heads") == 4 && g("encoder_layers") == 3 &&
        g("decoder_layers") == 3 && g("bench_vocab") == 8000)
      shape = "small";
    if (g("d_model") == 512 && g("ffn_dim") == 1024 && g("n_heads") == 4 && g("encoder_layers") == 6 &&
        g("decoder_layers") == 6 && g("bench_vocab") == 10000)
      shape = "iwslt";
    const std::string n = s.at("norm").get<std::string>();
    if (shape.empty() || !pytorch_twin_has_norm(n)) return {};
    return {"pytorch_transformer.py", "--config " + shape + " --norm " + n + " --batch-size " +
                                          std::to_string(g("bench_batch")) + " --seq-len " + std::to_string(g("bench_len")) +
                                          (s.at("normalize_before").get<bool>() ? "" : " --post-norm")};
  }

  std::unique_ptr<TaskBatch> bench_batch(const json& s) const override {
    // bench_batch sentences of bench_len tokens per side (the last one </s>), synthetic ids.
    const int64_t B = s.at("bench_batch").get<int64_t>(), T = s.at("bench_len").get<int64_t>(),
                  V = s.at("bench_vocab").get<int64_t>();
    std::vector<int64_t> src((size_t)(B * T)), tgt((size_t)(B * T)), prev((size_t)(B * T));
    for (int64_t i = 0; i < B * T; ++i) {
      const bool last = i % T == T - 1;
      src[(size_t)i] = last ? 2 : 4 + (i * 7919) % (V - 4);
      tgt[(size_t)i] = last ? 2 : 4 + (i * 104729 + 13) % (V - 4);
    }
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) prev[(size_t)(b * T + t)] = t == 0 ? 2 : tgt[(size_t)(b * T + t - 1)];
    auto out = std::make_unique<MtBatch>();
    out->src = nl::Tensor::from_vector(src, {B, T});
    out->target = nl::Tensor::from_vector(tgt, {B, T});
    out->prev = nl::Tensor::from_vector(prev, {B, T});
    out->items = B * T;
    return out;
  }

  /// The loaded corpus (for the generate and translate commands).
  std::shared_ptr<const MtCorpus> corpus() const { return corpus_; }

 private:
  const nl::data::BatchPlan& plan(const std::string& split) const {
    corpus_->split(split);  // names the missing split
    return plans_.at(split);
  }

  // The average of the newest n checkpoint{epoch} files in `dir` (fewer if the run had fewer epochs), or
  // `best` when there are none or n = 0. Records how many were averaged in r["averaged_checkpoints"].
  static nl::StateDict averaged_weights(const fs::path& dir, int64_t n, const nl::StateDict& best, Metrics* r) {
    static const std::regex epoch_file("checkpoint[0-9]+\\.safetensors");
    int64_t have = 0;
    if (n > 0 && fs::is_directory(dir))
      for (const auto& e : fs::directory_iterator(dir)) have += std::regex_match(e.path().filename().string(), epoch_file);
    (*r)["averaged_checkpoints"] = (double)std::min(n, have);
    if (std::min(n, have) == 0) return best;
    nl::TensorMap avg = nl::average_checkpoints(nl::last_n_checkpoints(dir, std::min(n, have), nl::CheckpointSeries::kEpoch));
    nl::StateDict w;
    for (auto& [k, v] : avg) w[k.rfind("model.", 0) == 0 ? k.substr(6) : k] = v;
    return w;
  }

  SplitLoss split_loss(nl::TransformerModel& model, const std::string& split) const {
    nl::NoGradGuard ng;
    const bool was = model.is_training();
    model.eval();
    SplitLoss r;
    for (const auto& ids : plan(split).batches) {
      MtBatch b = collate_mt(corpus_->split(split), ids);
      to_device(b, model.device());
      nl::Variable logits = model.forward(b.src, b.prev);
      const int64_t V = logits.size(-1);
      nl::Variable flat = nl::reshape(logits, {-1, V});
      nl::Tensor tgt = b.target.reshape({-1});
      r.loss += nl::cross_entropy(flat, tgt, label_smoothing_, nl::data::Dictionary::kPad).item() * (double)b.items;
      r.nll += nl::cross_entropy(flat, tgt, 0.0, nl::data::Dictionary::kPad).item() * (double)b.items;
      r.tokens += b.items;
    }
    model.train(was);
    if (r.tokens > 0) {
      r.loss /= (double)r.tokens;
      r.nll /= (double)r.tokens;
    }
    return r;
  }

  std::shared_ptr<MtCorpus> corpus_;
  std::map<std::string, nl::data::BatchPlan> plans_;
  int64_t max_tokens_ = 4096, max_src_ = 1024, max_tgt_ = 1024;
  double label_smoothing_ = 0.1;
  uint64_t seed_ = 1;
  mutable uint64_t epoch_cached_ = UINT64_MAX;
  mutable std::vector<std::vector<int64_t>> order_;
};

}  // namespace

std::unique_ptr<Task> make_mt_task() { return std::make_unique<MtTask>(); }

namespace {
// The direction ("en-de") a checkpoint's model was trained for: from its "data" summary ("multi30k en-de
// (...)", written since issue 29), else from summary.json of the folder it was trained on; "" if unknown.
std::string trained_direction(const json& meta) {
  if (meta.contains("data") && meta["data"].is_string()) {
    static const std::regex re(R"( ([a-z]{2,3}-[a-z]{2,3}) \()");
    std::smatch m;
    const std::string d = meta["data"].get<std::string>();
    if (std::regex_search(d, m, re)) return m[1].str();
  }
  const json& s = meta["settings"];
  if (!s.contains("data") || !s["data"].is_string()) return "";
  std::ifstream f(fs::path(s["data"].get<std::string>()) / "summary.json");
  const json j = f ? json::parse(f, nullptr, /*allow_exceptions=*/false) : json();
  return j.is_object() && j.contains("direction") && j["direction"].is_string() ? j["direction"].get<std::string>() : "";
}
}  // namespace

MtModel load_mt_model(const fs::path& checkpoint, const std::string& data) {
  nl::Checkpoint c = nl::load_checkpoint(checkpoint);
  if (!c.meta.is_object() || c.meta.value("task", std::string()) != "mt" || !c.meta.contains("settings"))
    throw std::runtime_error(checkpoint.string() + " is not a checkpoint of `normlab train mt` (its metadata names task '" +
                             (c.meta.is_object() ? c.meta.value("task", std::string("?")) : std::string("?")) + "')");
  MtModel r;
  auto task = std::make_unique<MtTask>();
  r.settings = c.meta["settings"];
  const std::string trained_on = trained_direction(c.meta);
  if (!data.empty()) r.settings["data"] = data;
  task->setup(r.settings);
  r.corpus = task->corpus();
  const std::string now = r.corpus->src_lang + "-" + r.corpus->tgt_lang;
  if (!trained_on.empty() && trained_on != now)
    throw std::runtime_error(checkpoint.string() + " translates " + trained_on + ", but " + r.corpus->dir.string() +
                             " is prepared " + now + ": pass --data with a folder prepared " + trained_on +
                             " (normlab data prepare ... --direction " + trained_on + ")");
  r.model = std::static_pointer_cast<nl::TransformerModel>(task->build_model(r.settings));
  nl::StateDict w;
  for (auto& [k, v] : c.tensors)
    if (k.rfind("model.", 0) == 0) w[k.substr(6)] = v;
  const auto own = r.model->state_dict();
  for (const auto& [k, v] : own) {
    auto it = w.find(k);
    if (it == w.end())
      throw std::runtime_error(checkpoint.string() + " has no tensor '" + k + "': it was written by a different model");
    if (it->second.shape() != v.shape())
      throw std::runtime_error(checkpoint.string() + ": '" + k + "' is " + nl::shape_str(it->second.shape()) +
                               " but the model built for " + r.settings["data"].get<std::string>() + " needs " +
                               nl::shape_str(v.shape()) + (k.find("embed") != std::string::npos
                                   ? ": the checkpoint's vocabulary differs from this corpus's dictionaries; pass "
                                     "--data with the folder the model was trained on"
                                   : ""));
  }
  r.model->load_state_dict(w);
  r.model->to(run_device());  // the global --device: a checkpoint of any device translates on this one
  r.settings["device"] = run_device().str();
  r.task = std::move(task);
  return r;
}

}  // namespace nlapp
