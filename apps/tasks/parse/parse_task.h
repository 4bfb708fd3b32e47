#pragma once
// Task "parse": the MLP transition-based dependency parser of Chen & Manning (2014) as Xu et al. 2019
// train it (appendix A.4): arc-standard transitions from the static oracle, 48 features with 50-d
// embeddings, hidden 512 with the norm before the cube activation, dropout 0.2, batches of 1,024
// transition examples, Adam lr 1e-3, 20 epochs; dev UAS every epoch picks the checkpoint tested;
// greedy decoding; UAS/LAS without punctuation and parsing speed (sentences/s) on test. Configs:
// apps/configs/parse/ud-ewt.json (default data, gold XPOS tags) and ptb-dep.json (NLTK's WSJ sample).
#include <memory>
#include <string>

#include "engine/task.h"

namespace nlapp {

/// A new parse task (see the file comment).
std::unique_ptr<Task> make_parse_task();

}  // namespace nlapp
