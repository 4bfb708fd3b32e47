#pragma once
// Task "lm": language modelling with a Transformer-XL style decoder-only Transformer (nl::XLModel:
// relative positions with the learned biases u and v, tied input/output embeddings, segment-level
// recurrence with a memory of mem_len hidden states carried without gradient across the segments of
// training and of evaluation). Two levels:
//   word (dataset ptb): PowerNorm's PTB baseline (Shen et al. 2020 Table 2; the Tensorized-Transformer
//     script, ni-pn-details.md §6.3: 3 layers, d 256, mem_len 0); reports perplexity from summed NLL;
//   character (tinyshakespeare, enwik8): Xu et al. 2019's Enwiki8 column (appendix A.2: the
//     Transformer-XL code, 12 layers, d 512, 8 heads); reports bits per character. Tiny Shakespeare is
//     the CPU-scale stand-in for Enwiki8.
// Validation picks checkpoint_best (lower ppl / bpc); its test score is reported. See docs/task-lm.md.
#include <memory>
#include <string>

#include "engine/task.h"

namespace nlapp {

/// A new language-modelling task (see the file comment).
std::unique_ptr<Task> make_lm_task();

}  // namespace nlapp
