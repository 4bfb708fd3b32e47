#pragma once
// Task "cls": sentence classification with a Transformer encoder (Xu et al. 2019, appendix A.3; the RT
// and SST-5 columns of Tables 1-4): 4-layer pre-norm encoder, d 128, FFN 512, 4 heads, dropout 0.2,
// mean pooling over non-padding tokens, a linear layer to the classes; Adam (0.9, 0.998), batches of
// 4,096 tokens, AdaNorm C = 0.3. The paper gives no learning rate, epochs, tokenisation or embedding
// initialisation; normlab uses lr 5e-4 (fixed), 10 epochs, lowercased word tokens with a vocabulary
// from the training split, and randomly initialised embeddings (no pretrained vectors). Validation
// accuracy picks checkpoint_best, whose test accuracy is the reported number.
#include <memory>
#include <string>

#include "engine/task.h"

namespace nlapp {

/// A new classification task (see the file comment).
std::unique_ptr<Task> make_cls_task();

}  // namespace nlapp
