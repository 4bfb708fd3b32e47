#include "tasks/lm/lm_task.h"

#include <cmath>
#include <map>

#include "autograd/functions.h"
#include "engine/norm_settings.h"
#include "engine/run_device.h"
#include "nn/transformer/xl_model.h"
#include "report/paper_numbers.h"
#include "tasks/lm/lm_batches.h"
#include "tasks/lm/lm_corpus.h"
#include "tasks/transformer_settings.h"

namespace nlapp {
using json = nlohmann::json;

namespace {

// The Transformer settings an XL language model reads, with the tinyshakespeare config's defaults.
std::vector<OptionSpec> model_settings() {
  static const std::map<std::string, json> defaults = {
      {"d_model", 256},          {"n_heads", 4},           {"ffn_dim", 1024},          {"decoder_layers", 3},
      {"dropout", 0.1},          {"attention_dropout", 0.0}, {"activation_dropout", 0.1}, {"activation_fn", "relu"},
      {"normalize_before", false}, {"norm_placement", "all"}, {"decoder_norm", "auto"},
      {"allow_decoder_batch_stats", false}};
  return transformer_settings_with(defaults);
}

class LmTask : public Task {
 public:
  LmTask() {
    info_ = {"lm",
             "Transformer-XL style language model: word level (PTB, perplexity) or character level "
             "(tinyshakespeare, the CPU stand-in for Xu et al.'s Enwiki8, or enwik8; bits per character)",
             "tok", "bpc", false, "Xu et al. 2019 Tables 1-4 (Enwiki8 BPC); Shen et al. 2020 Table 2 (PTB PPL)"};
    info_.bench_steps = 20;
  }

  const TaskInfo& info() const override { return info_; }

  std::vector<OptionSpec> settings() const override {
    std::vector<OptionSpec> v = norm_settings("layernorm", 1.0);
    for (auto& o : model_settings()) v.push_back(o);
    v.push_back(choice_option("dataset", "tinyshakespeare", lm_dataset_names(),
                              "Corpus: ptb (word level), tinyshakespeare or enwik8 (character level)"));
    v.push_back(option("data", OptKind::String, "../shared/data/tinyshakespeare",
                       "Folder of the corpus (enwik8: the 100M-byte file or its folder)"));
    v.push_back(option("tokens_per_sample", OptKind::Int, 128, "Segment length T (Transformer-XL --tgt_len)", 1, 1 << 20));
    v.push_back(option("mem_len", OptKind::Int, 128, "Hidden states kept per layer as memory for the next segment; 0: none",
                       0, 1 << 20));
    v.push_back(option("eval_mem_len", OptKind::Int, -1, "Memory length in evaluation; -1: --mem-len", -1, 1 << 20));
    v.push_back(option("d_head", OptKind::Int, 0, "Per-head width; 0: d_model / n_heads", 0, 65536));
    v.push_back(option("batch_size", OptKind::Int, 22, "Rows of a training segment (contiguous pieces of the stream)", 1, 1e6));
    v.push_back(option("eval_batch_size", OptKind::Int, 10, "Rows of an evaluation segment", 1, 1e6));
    v.push_back(option("bench_vocab", OptKind::Int, 256, "normlab bench without data: vocabulary size", 4, 1e7));
    v.push_back(option("label_smoothing", OptKind::Float, 0.0,
                       "Label smoothing of the training loss (Shen et al. 2020 appendix A: 0.1; the released "
                       "Tensorized-Transformer script: 0); validation and test report the plain NLL",
                       0, 0.99));
    return v;
  }

  json trainer_defaults() const override {
    return {{"optimizer", "adam"}, {"lr", 2.5e-4},     {"lr_scheduler", "cosine"}, {"clip_norm", 0.25},
            {"max_update", 4000},  {"max_epoch", 1000}, {"log_interval", 20}};
  }

  void setup(const json& s) override {
    const std::string ds = s.at("dataset").get<std::string>(), dir = s.at("data").get<std::string>();
    if (!corpus_ || corpus_->dataset != ds || corpus_->source != load_path(ds, dir))
      corpus_ = std::make_shared<LmCorpus>(load_lm_corpus(ds, dir));
    info_.metric = corpus_->word_level ? "ppl" : "bpc";
    T_ = s.at("tokens_per_sample").get<int64_t>();
    train_ = train_grid(corpus_->train, s.at("batch_size").get<int64_t>());
    if (train_.cols < T_)
      throw std::invalid_argument("lm: --tokens-per-sample " + std::to_string(T_) + " is longer than a training row (" +
                                  std::to_string(train_.cols) + " tokens): lower it or --batch-size");
    const int64_t er = s.at("eval_batch_size").get<int64_t>();
    valid_ = eval_grid(corpus_->valid, er);
    test_ = eval_grid(corpus_->test, er);
    eval_mem_ = s.at("eval_mem_len").get<int64_t>();
    label_smoothing_ = s.at("label_smoothing").get<double>();
    reset_memory();
  }

  std::string data_summary() const override {
    return corpus_->dataset + " " + corpus_->source.string() + " (" + (corpus_->word_level ? "words" : "bytes") +
           ": train " + std::to_string(corpus_->train.size()) + ", valid " + std::to_string(corpus_->valid.size()) +
           ", test " + std::to_string(corpus_->test.size()) + "; vocabulary " + std::to_string(corpus_->vocab) + ", " +
           std::to_string(corpus_->n_unk) + " valid/test tokens unknown" +
           (corpus_->dataset == "tinyshakespeare" ? "; stands in for Xu et al.'s Enwiki8" : "") + ")";
  }

  std::shared_ptr<nl::Module> build_model(const json& s) override {
    const int64_t V = corpus_ ? corpus_->vocab : s.at("bench_vocab").get<int64_t>();
    json full = s;
    for (const auto& o : transformer_settings())
      if (!full.contains(o.key)) full[o.key] = o.def;
    // Every slot of a decoder-only model is a decoder slot: "auto" means --norm there, and a
    // batch-statistic norm needs --allow-decoder-batch-stats (TransformerConfig::validate says why).
    if (full.at("decoder_norm") == "auto") full["decoder_norm"] = full.at("norm");
    nl::XLConfig c;
    c.base = transformer_config(full, norm_options(s), V, V);
    c.d_head = s.at("d_head").get<int64_t>();
    c.mem_len = s.at("mem_len").get<int64_t>();
    reset_memory();
    return std::make_shared<nl::XLModel>(c);
  }

  int64_t epoch_size(uint64_t) const override { return train_.cols / T_; }

  std::unique_ptr<TaskBatch> train_batch(uint64_t epoch, int64_t index) const override {
    auto b = std::make_unique<LmBatch>(grid_segment(train_, index * T_, T_));
    b->epoch = epoch;
    b->index = index;
    return b;
  }

  nl::Variable loss(nl::Module& model, const TaskBatch& batch) const override {
    auto& m = static_cast<nl::XLModel&>(model);
    const auto& b = static_cast<const LmBatch&>(batch);
    // The memory continues only from the previous segment of the same rows and model.
    const bool carry = &model == mem_model_ && !mem_.empty() && mem_[0].size(0) == b.tokens.size(0) &&
                       (b.index < 0 || (b.index > 0 && b.epoch == mem_epoch_ && b.index == mem_next_));
    nl::XLOutput o = m.forward(b.tokens, carry ? mem_ : std::vector<nl::Tensor>{}, b.pad_mask);
    mem_ = std::move(o.memory);
    mem_model_ = &model;
    mem_epoch_ = b.epoch;
    mem_next_ = b.index + 1;
    return token_nll(o.logits, b.targets, label_smoothing_);
  }

  Metrics evaluate(nl::Module& model, const std::string& split) const override {
    auto& m = static_cast<nl::XLModel&>(model);
    const LmGrid& g = split == "test" ? test_ : split == "valid" ? valid_ : bad_split(split);
    nl::NoGradGuard ng;
    const bool was = m.is_training();
    m.eval();
    std::vector<nl::Tensor> mem;
    double nll = 0;
    int64_t n = 0;
    for (int64_t start = 0; start < g.cols; start += T_) {
      LmBatch b = grid_segment(g, start, T_);
      to_device(b, m.device());
      nl::XLOutput o = m.forward(b.tokens, mem, b.pad_mask, eval_mem_);
      mem = std::move(o.memory);
      if (b.items == 0) continue;
      nll += token_nll(o.logits, b.targets).item() * (double)b.items;
      n += b.items;
    }
    m.train(was);
    return lm_scores(nll, n);
  }

  double paper_reference(const json& s) const override {
    const std::string n = s.at("norm").get<std::string>();
    return s.at("dataset") == "ptb" ? paper_number("shen2020", "ptb", n) : paper_number("xu2019", "enwiki8", n);
  }

  std::vector<std::pair<std::string, double>> paper_columns(const json& s) const override {
    if (s.at("dataset") == "ptb") return {{"paper PTB PPL (Shen et al. 2020, Table 2)", paper_reference(s)}};
    return {{"paper Enwiki8 BPC", paper_reference(s)}};
  }

  std::unique_ptr<TaskBatch> bench_batch(const json& s) const override {
    // batch_size rows of tokens_per_sample synthetic ids; the memory is kept from step to step.
    const int64_t B = s.at("batch_size").get<int64_t>(), T = s.at("tokens_per_sample").get<int64_t>(),
                  V = s.at("bench_vocab").get<int64_t>();
    std::vector<int64_t> ids((size_t)(B * T)), tgt((size_t)(B * T));
    for (int64_t i = 0; i < B * T; ++i) {
      ids[(size_t)i] = (i * 7919) % V;
      tgt[(size_t)i] = ((i + 1) * 7919) % V;
    }
    auto b = std::make_unique<LmBatch>();
    b->tokens = nl::Tensor::from_vector(ids, {B, T});
    b->targets = nl::Tensor::from_vector(tgt, {B, T});
    b->items = B * T;
    b->index = -1;
    return b;
  }

 private:
  static std::string load_path(const std::string& ds, const std::string& dir) {
    namespace fs = std::filesystem;
    return ds == "enwik8" && fs::is_directory(dir) ? (fs::path(dir) / "enwik8").string() : dir;
  }
  [[noreturn]] static const LmGrid& bad_split(const std::string& split) {
    throw std::invalid_argument("lm: unknown split '" + split + "' (valid: valid, test)");
  }
  // Mean NLL over the non-padding targets of logits [B, T, V] and targets [B, T] (label-smoothed by `ls`).
  static nl::Variable token_nll(const nl::Variable& logits, const nl::Tensor& targets, double ls = 0.0) {
    const int64_t N = logits.size(0) * logits.size(1);
    return nl::cross_entropy(nl::reshape(logits, {N, logits.size(2)}), targets.reshape({N}), ls, kLmIgnore);
  }
  void reset_memory() const {
    mem_.clear();
    mem_model_ = nullptr;
  }

  TaskInfo info_;
  std::shared_ptr<LmCorpus> corpus_;
  LmGrid train_, valid_, test_;
  int64_t T_ = 128, eval_mem_ = -1;
  double label_smoothing_ = 0.0;
  mutable std::vector<nl::Tensor> mem_;
  mutable const nl::Module* mem_model_ = nullptr;
  mutable uint64_t mem_epoch_ = 0;
  mutable int64_t mem_next_ = 0;
};

}  // namespace

std::unique_ptr<Task> make_lm_task() { return std::make_unique<LmTask>(); }

}  // namespace nlapp
