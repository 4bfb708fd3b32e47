#include "tasks/cls/cls_task.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <span>

#include "autograd/functions.h"
#include "data/text/batching.h"
#include "engine/norm_settings.h"
#include "engine/run_device.h"
#include "nn/models/sentence_classifier.h"
#include "report/paper_numbers.h"
#include "tasks/cls/cls_corpus.h"
#include "tasks/transformer_settings.h"

namespace nlapp {
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// One batch: tokens [B, T] right-padded with <pad>, labels [B]. items = sentences.
struct ClsBatch : TaskBatch {
  nl::Tensor tokens, labels;
  std::vector<nl::Tensor*> tensors() override { return {&tokens, &labels}; }
};

// The encoder settings of transformer_settings() with the paper's classifier defaults (appendix A.3);
// the decoder's settings do not apply to a classifier and are left out.
std::vector<OptionSpec> encoder_settings() {
  static const std::map<std::string, json> defaults = {
      {"d_model", 128}, {"n_heads", 4}, {"ffn_dim", 512}, {"encoder_layers", 4}, {"dropout", 0.2},
      {"attention_dropout", 0.0}, {"activation_dropout", 0.0}, {"activation_fn", "relu"}, {"normalize_before", true},
      {"norm_placement", "all"}, {"learned_pos", false}, {"max_source_positions", 1024}};
  return transformer_settings_with(defaults);
}

// Sentences `ids` of `split` as one batch, right-padded with <pad> to the longest.
ClsBatch collate(const ClsSplit& split, const std::vector<int64_t>& ids) {
  std::vector<std::span<const int32_t>> seqs;
  std::vector<int64_t> labels;
  for (int64_t i : ids) {
    seqs.emplace_back(split.tokens[(size_t)i]);
    labels.push_back(split.labels[(size_t)i]);
  }
  auto t = nl::data::collate_tokens(seqs, nl::data::Dictionary::kPad, false);
  ClsBatch b;
  b.tokens = nl::Tensor::from_vector(t.ids, {t.batch_size, t.max_len});
  b.labels = nl::Tensor::from_vector(labels, {(int64_t)labels.size()});
  b.items = (int64_t)labels.size();
  return b;
}

class ClsTask : public Task {
 public:
  const TaskInfo& info() const override {
    static const TaskInfo i = [] {
      TaskInfo t{"cls",
                 "Transformer sentence classification (SST-5, RT): 4-layer pre-norm encoder, mean pooling, linear; "
                 "lowercased words, vocabulary from train, no pretrained vectors",
                 "sent", "acc", true, "Xu et al. 2019, Tables 1-2 (RT and SST5 columns)"};
      t.bench_steps = 20;
      return t;
    }();
    return i;
  }

  std::vector<OptionSpec> settings() const override {
    std::vector<OptionSpec> v = norm_settings("layernorm", 0.3);
    for (auto& o : encoder_settings()) v.push_back(o);
    v.push_back(option("data", OptKind::String, "data-bin/sst5",
                       "Prepared data folder (normlab data prepare sst5|rt --data ../shared/data/... --out DIR)"));
    for (auto& o : token_batch_settings(20000, "synthetic vocabulary size", "tokens per sentence")) v.push_back(o);
    return v;
  }

  json trainer_defaults() const override {
    return {{"optimizer", "adam"}, {"adam_betas", "(0.9, 0.998)"}, {"lr", 5e-4},
            {"lr_scheduler", "fixed"}, {"max_epoch", 10}, {"log_interval", 10}};
  }

  void setup(const json& s) override {
    const fs::path dir = s.at("data").get<std::string>();
    if (!corpus_ || corpus_->dir != dir) corpus_ = ClsCorpus::load(dir);
    seed_ = (uint64_t)s.at("seed").get<int64_t>();
    nl::data::BatchingOptions o;
    o.max_tokens = s.at("max_tokens").get<int64_t>();
    o.max_source_positions = s.at("max_source_positions").get<int64_t>();
    plans_.clear();
    for (const auto& [name, sp] : corpus_->splits) {
      plans_[name] = nl::data::plan_batches(sp.lengths(), {}, o);
      if (name != "train" && !plans_[name].dropped.empty())
        throw std::runtime_error(std::to_string(plans_[name].dropped.size()) + " " + name + " sentences of " +
                                 corpus_->dir.string() + " are longer than --max-source-positions " +
                                 std::to_string(o.max_source_positions) + ": raise it so every sentence is scored");
    }
    epoch_cached_ = UINT64_MAX;
  }

  std::string data_summary() const override {
    std::string s = corpus_->name + " " + corpus_->dir.string() + " (";
    for (const char* n : {"train", "valid", "test"}) s += std::string(n) + " " + std::to_string(corpus_->split(n).size()) + ", ";
    return s + std::to_string(corpus_->num_classes) + " classes, lowercased vocab " + std::to_string(corpus_->dict.size()) +
           " from " + std::to_string(corpus_->cased_vocab) + " cased)";
  }

  std::shared_ptr<nl::Module> build_model(const json& s) override {
    // Without setup() (normlab bench): the synthetic --bench-vocab and SST-5's 5 classes.
    const int64_t V = corpus_ ? corpus_->dict.size() : s.at("bench_vocab").get<int64_t>();
    const int64_t C = corpus_ ? corpus_->num_classes : 5;
    // transformer_config reads the decoder's settings too: their defaults, which an encoder ignores.
    json full = s;
    for (const auto& o : transformer_settings())
      if (!full.contains(o.key)) full[o.key] = o.def;
    return std::make_shared<nl::SentenceClassifier>(transformer_config(full, norm_options(s), V, V), C);
  }

  int64_t epoch_size(uint64_t) const override { return (int64_t)plan("train").batches.size(); }

  std::unique_ptr<TaskBatch> train_batch(uint64_t epoch, int64_t index) const override {
    if (epoch_cached_ != epoch) {
      order_ = nl::data::shuffled_batches(plan("train"), seed_, (int64_t)epoch + 1);
      epoch_cached_ = epoch;
    }
    return std::make_unique<ClsBatch>(collate(corpus_->split("train"), order_.at((size_t)index)));
  }

  nl::Variable loss(nl::Module& model, const TaskBatch& b) const override {
    const auto& cb = static_cast<const ClsBatch&>(b);
    return nl::cross_entropy(static_cast<nl::SentenceClassifier&>(model).forward(cb.tokens), cb.labels);
  }

  Metrics evaluate(nl::Module& model, const std::string& split) const override {
    auto& m = static_cast<nl::SentenceClassifier&>(model);
    nl::NoGradGuard ng;
    const bool was = m.is_training();
    m.eval();
    int64_t correct = 0, n = 0;
    double loss_sum = 0;
    for (const auto& ids : plan(split).batches) {
      ClsBatch b = collate(corpus_->split(split), ids);
      to_device(b, m.device());
      nl::Variable logits = m.forward(b.tokens);
      loss_sum += nl::cross_entropy(logits, b.labels).item() * (double)b.items;
      correct += (int64_t)nl::sum(nl::eq(nl::argmax(logits.data(), 1), b.labels)).item();
      n += b.items;
    }
    m.train(was);
    const double d = std::max<double>(1.0, (double)n);
    return {{"acc", 100.0 * (double)correct / d}, {"loss", loss_sum / d}};
  }

  double paper_reference(const json& s) const override {
    return paper_number("xu2019", corpus_ ? corpus_->name : "sst5", s.at("norm").get<std::string>());
  }

  std::vector<std::pair<std::string, double>> paper_columns(const json& s) const override {
    const std::string n = s.at("norm").get<std::string>();
    return {{"paper RT", paper_number("xu2019", "rt", n)}, {"paper SST5", paper_number("xu2019", "sst5", n)}};
  }

  std::pair<std::string, std::string> pytorch_bench(const json& s) const override {
    // The twin's `cls` shape: 4 layers, d 128, FFN 512, 4 heads, vocabulary 20,000, 5 classes, dropout 0.2.
    auto g = [&](const char* k) { return s.at(k).get<int64_t>(); };
    const std::string n = s.at("norm").get<std::string>();
    if (g("d_model") != 128 || g("ffn_dim") != 512 || g("n_heads") != 4 || g("encoder_layers") != 4 ||
        g("bench_vocab") != 20000 || s.at("dropout").get<double>() != 0.2 || s.at("attention_dropout").get<double>() != 0.0 ||
        !pytorch_twin_has_norm(n))
      return {};
    return {"pytorch_transformer.py", "--config cls --norm " + n + " --batch-size " + std::to_string(g("bench_batch")) +
                                          " --seq-len " + std::to_string(g("bench_len")) +
                                          (s.at("normalize_before").get<bool>() ? "" : " --post-norm")};
  }

  std::unique_ptr<TaskBatch> bench_batch(const json& s) const override {
    // bench_batch sentences of bench_len tokens (the last one </s>, no padding), synthetic ids and labels.
    const int64_t B = s.at("bench_batch").get<int64_t>(), T = s.at("bench_len").get<int64_t>(),
                  V = s.at("bench_vocab").get<int64_t>();
    std::vector<int64_t> ids((size_t)(B * T)), labels((size_t)B);
    for (int64_t i = 0; i < B * T; ++i) ids[(size_t)i] = i % T == T - 1 ? 2 : 4 + (i * 7919) % (V - 4);
    for (int64_t b = 0; b < B; ++b) labels[(size_t)b] = b % 5;
    auto out = std::make_unique<ClsBatch>();
    out->tokens = nl::Tensor::from_vector(ids, {B, T});
    out->labels = nl::Tensor::from_vector(labels, {B});
    out->items = B;
    return out;
  }

 private:
  const nl::data::BatchPlan& plan(const std::string& split) const {
    corpus_->split(split);  // names the missing split
    return plans_.at(split);
  }

  std::shared_ptr<ClsCorpus> corpus_;
  std::map<std::string, nl::data::BatchPlan> plans_;
  uint64_t seed_ = 1;
  mutable uint64_t epoch_cached_ = UINT64_MAX;
  mutable std::vector<std::vector<int64_t>> order_;
};

}  // namespace

std::unique_ptr<Task> make_cls_task() { return std::make_unique<ClsTask>(); }

}  // namespace nlapp
