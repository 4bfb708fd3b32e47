#include "tasks/parse/parse_task.h"

#include <cmath>
#include <map>
#include <stdexcept>

#include "autograd/functions.h"
#include "data/image_dataset.h"
#include "data/text/parser_features.h"
#include "engine/norm_settings.h"
#include "nn/models/parser_mlp.h"
#include "report/paper_numbers.h"
#include "tasks/parse/parse_data.h"
#include "tasks/parse/parse_decode.h"

namespace nlapp {
using json = nlohmann::json;

namespace {

struct TransitionBatch : TaskBatch {
  nl::Tensor ids, targets;  ///< int64 [B, 48] and [B]
  std::vector<nl::Tensor*> tensors() override { return {&ids, &targets}; }
};

// Vocabulary sizes of the synthetic model `normlab bench` builds without data.
constexpr int32_t kBenchWords = 20000, kBenchTags = 50, kBenchLabels = 51;

class ParseTask : public Task {
 public:
  const TaskInfo& info() const override {
    static const TaskInfo i{"parse", "Chen & Manning 2014 MLP dependency parser, Xu et al. 2019 appendix A.4", "ex", "uas",
                            true, "Xu et al. 2019, Tables 1-4 (PTB WSJ §23 UAS)"};
    return i;
  }

  std::vector<OptionSpec> settings() const override {
    std::vector<OptionSpec> v = norm_settings("layernorm", 1.0);
    v.push_back(option("data", OptKind::String, "../shared/data/ud-english-ewt",
                       "Treebank: a UD folder with *-{train,dev,test}.conllu[.gz], or NLTK's dependency_treebank.zip"));
    v.push_back(choice_option("pos", "xpos", {"xpos", "upos"}, "Gold tag column used as the POS features"));
    v.push_back(option("min_word_count", OptKind::Int, 2,
                       "Training words seen fewer times map to UNK (so UNK is trained)", 1, 1e9));
    v.push_back(option("embed_dim", OptKind::Int, 50, "Embedding size of words, tags and labels (paper: 50)", 1, 4096));
    v.push_back(option("hidden", OptKind::Int, 512, "Hidden layer width (paper: 512)", 1, 65536));
    v.push_back(option("dropout", OptKind::Float, 0.2, "Dropout on the hidden layer (paper: 0.2)", 0, 0.99));
    v.push_back(choice_option("activation", "cube", {"cube", "relu"}, "Hidden activation: cube x^3 (Chen & Manning) or relu"));
    v.push_back(option("batch_size", OptKind::Int, 1024, "Transition examples per batch (paper: 1,024)", 1, 1e7));
    v.push_back(option("parse_batch", OptKind::Int, 1024, "Sentences decoded together in evaluation", 1, 1e7));
    return v;
  }

  json trainer_defaults() const override { return {{"lr", 1e-3}, {"max_epoch", 20}, {"save_interval", 0}}; }

  void setup(const json& s) override {
    const std::string data = s.at("data").get<std::string>();
    const bool upos = s.at("pos").get<std::string>() == "upos";
    const int64_t mwc = s.at("min_word_count").get<int64_t>();
    if (data != loaded_data_) {  // a sweep sets up once per run: read the treebank once
      tb_ = load_treebank(data);
      loaded_data_ = data;
      vocab_key_.clear();
    }
    const std::string key = std::to_string(upos) + "/" + std::to_string(mwc);
    if (key != vocab_key_) {
      vocab_ = build_parser_vocab(tb_.train, mwc, upos);
      examples_ = oracle_examples(tb_.train, vocab_);
      vocab_key_ = key;
    }
    if (examples_.size() == 0)
      throw std::runtime_error("treebank '" + data + "' has no projective training sentence to learn from");
    batch_size_ = s.at("batch_size").get<int64_t>();
    parse_batch_ = s.at("parse_batch").get<int64_t>();
    seed_ = (uint64_t)s.at("seed").get<int64_t>();
    order_epoch_ = UINT64_MAX;
  }

  std::string data_summary() const override {
    return tb_.name + " (" + std::to_string(tb_.train.size()) + " train sentences, " +
           std::to_string(tb_.train.size() - (size_t)examples_.skipped) + " projective -> " +
           std::to_string(examples_.size()) + " transition examples / " + std::to_string(tb_.dev.size()) + " dev / " +
           std::to_string(tb_.test.size()) + " test sentences; gold " + (vocab_.use_upos ? "UPOS" : "XPOS") + " tags; " +
           std::to_string(vocab_.words()) + " words, " + std::to_string(vocab_.labels() - 1) + (vocab_.labels() == 2 ? " label" : " labels") +
           (tb_.labelled ? "" : " (unlabelled data: LAS = UAS)") + ")";
  }

  std::shared_ptr<nl::Module> build_model(const json& s) override {
    nl::ParserMlpConfig c;
    const bool have = !vocab_key_.empty();
    c.words = have ? vocab_.words() : kBenchWords;
    c.tags = have ? vocab_.tags() : kBenchTags;
    c.labels = have ? vocab_.labels() : kBenchLabels;
    c.classes = 1 + 2 * (c.labels - 1);
    c.embed_dim = s.at("embed_dim").get<int64_t>();
    c.hidden = s.at("hidden").get<int64_t>();
    c.dropout = s.at("dropout").get<double>();
    c.norm = s.at("norm").get<std::string>();
    c.norm_opts = norm_options(s);
    c.activation = s.at("activation").get<std::string>();
    return std::make_shared<nl::ParserMlp>(c);
  }

  int64_t epoch_size(uint64_t) const override { return (examples_.size() + batch_size_ - 1) / batch_size_; }

  std::unique_ptr<TaskBatch> train_batch(uint64_t epoch, int64_t index) const override {
    if (order_epoch_ != epoch) {
      order_ = nl::shuffled_indices(examples_.size(), seed_, epoch);
      order_epoch_ = epoch;
    }
    const int64_t F = nl::data::kParseFeatures, b0 = index * batch_size_;
    const int64_t B = std::min(batch_size_, examples_.size() - b0);
    std::vector<int64_t> ids((size_t)(B * F)), tg((size_t)B);
    for (int64_t i = 0; i < B; ++i) {
      const int64_t e = order_[(size_t)(b0 + i)];
      std::copy_n(examples_.features.begin() + e * F, F, ids.begin() + i * F);
      tg[(size_t)i] = examples_.targets[(size_t)e];
    }
    auto out = std::make_unique<TransitionBatch>();
    out->ids = nl::Tensor::from_vector(ids, {B, F});
    out->targets = nl::Tensor::from_vector(tg, {B});
    out->items = B;
    return out;
  }

  nl::Variable loss(nl::Module& model, const TaskBatch& b) const override {
    const auto& tb = static_cast<const TransitionBatch&>(b);
    return nl::cross_entropy(static_cast<nl::ParserMlp&>(model)(nl::Variable(tb.ids)), tb.targets);
  }

  Metrics evaluate(nl::Module& model, const std::string& split) const override {
    const auto& sents = split == "test" ? tb_.test : split == "valid" ? tb_.dev : tb_.train;
    ParsedSplit p = greedy_parse(static_cast<nl::ParserMlp&>(model), vocab_, sents, parse_batch_);
    nl::metrics::AttachmentCounts c = score_parses(sents, p);
    return {{"uas", c.uas()}, {"las", c.las()}, {"sentences_per_s", (double)sents.size() / std::max(p.seconds, 1e-9)}};
  }

  double paper_reference(const json& s) const override { return paper_number("xu2019", "ptb", s.at("norm").get<std::string>()); }

  std::vector<std::pair<std::string, double>> paper_columns(const json& s) const override {
    const std::string data = s.at("data").get<std::string>();
    const bool ptb = data.size() >= 4 && data.compare(data.size() - 4, 4, ".zip") == 0;
    return {{ptb ? "paper PTB UAS (WSJ §2-21/23; ours: the NLTK WSJ sample)" : "paper PTB UAS (WSJ §23: a different data set)",
             paper_number("xu2019", "ptb", s.at("norm").get<std::string>())}};
  }

  std::unique_ptr<TaskBatch> bench_batch(const json& s) const override {
    const int64_t B = s.at("batch_size").get<int64_t>(), F = nl::data::kParseFeatures;
    std::vector<int64_t> ids((size_t)(B * F)), tg((size_t)B);
    for (int64_t i = 0; i < B * F; ++i) {
      const int64_t f = i % F;
      const int64_t vocab = f < nl::data::kParseWordFeatures ? kBenchWords
                            : f < nl::data::kParseWordFeatures + nl::data::kParsePosFeatures ? kBenchTags : kBenchLabels;
      ids[(size_t)i] = (i * 7919) % vocab;
    }
    for (int64_t i = 0; i < B; ++i) tg[(size_t)i] = i % (2 * kBenchLabels - 1);
    auto out = std::make_unique<TransitionBatch>();
    out->ids = nl::Tensor::from_vector(ids, {B, F});
    out->targets = nl::Tensor::from_vector(tg, {B});
    out->items = B;
    return out;
  }

 private:
  Treebank tb_;
  std::string loaded_data_, vocab_key_;
  ParserVocab vocab_;
  OracleExamples examples_;
  int64_t batch_size_ = 1024, parse_batch_ = 1024;
  uint64_t seed_ = 1;
  mutable std::vector<int64_t> order_;
  mutable uint64_t order_epoch_ = UINT64_MAX;
};

}  // namespace

std::unique_ptr<Task> make_parse_task() { return std::make_unique<ParseTask>(); }

}  // namespace nlapp
