#pragma once
// The feed-forward transition classifier of Chen & Manning (2014, §3.1) as Xu et al. 2019 (appendix
// A.4) train it: 48 features (18 words, 18 POS tags, 12 arc labels, features as in
// data/text/parser_features.h) each embedded in `embed_dim` dims (three tables), concatenated,
//   Linear(48·embed_dim → hidden) → norm → activation → dropout → Linear(hidden → classes),
// the norm BEFORE the activation ("we apply normalization before activation in every linear layer").
// The activation is Chen & Manning's cube x³ (or ReLU). Init as PyTorch's defaults (nn.Embedding
// N(0, 1), nn.Linear U(±1/sqrt(in))); no pretrained embeddings.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace nl {

/// Sizes and choices of ParserMlp (defaults: the paper's hidden 512, embeddings 50, dropout 0.2).
struct ParserMlpConfig {
  int64_t words = 0, tags = 0, labels = 0;  ///< vocabulary sizes of the three tables (>= 1 each)
  int64_t classes = 0;                      ///< transitions: 1 + 2·(arc labels)
  int64_t embed_dim = 50;
  int64_t hidden = 512;
  double dropout = 0.2;
  std::string norm = "layernorm";  ///< any name of norm_names()
  nlohmann::json norm_opts;        ///< passed to make_norm
  std::string activation = "cube"; ///< "cube" (x³, Chen & Manning) or "relu"
};

/// See the file comment; parameters word_embed, tag_embed, label_embed, fc1, norm, fc2.
class ParserMlp : public Module {
 public:
  /// Throws std::invalid_argument on a size < 1, an unknown activation or norm (naming the valid ones).
  explicit ParserMlp(const ParserMlpConfig& cfg);
  /// ids int64 [B, 48] (word, tag, label ids in feature order) -> logits [B, classes]. Throws
  /// std::invalid_argument on another shape or dtype; ids outside a table throw from the embedding.
  Variable forward(const Variable& ids) override;
  const ParserMlpConfig& config() const { return cfg_; }

 private:
  ParserMlpConfig cfg_;
  std::shared_ptr<Embedding> word_embed_, tag_embed_, label_embed_;
  std::shared_ptr<Linear> fc1_, fc2_;
  std::shared_ptr<Module> norm_;
  std::shared_ptr<Dropout> drop_;
};

}  // namespace nl
