#pragma once
// Task "mt": the Transformer on a prepared translation corpus (Xu et al. 2019, Tables 1-4 MT columns,
// appendix A.1; PowerNorm's IWSLT14 study): max_tokens batches, label-smoothed cross-entropy, Adam with
// inverse_sqrt warm-up (fairseq's recipe). Validation picks checkpoint_best by loss; the final test score
// is BLEU of beam search with the average of the last epoch checkpoints (apps/configs/mt/*.json).
#include <filesystem>
#include <memory>
#include <string>

#include "engine/task.h"
#include "nn/transformer/transformer.h"
#include "tasks/mt/mt_corpus.h"

namespace nlapp {

/// A trained translation model with its corpus and the settings it was trained with.
struct MtModel {
  std::unique_ptr<Task> task;
  std::shared_ptr<nl::TransformerModel> model;
  std::shared_ptr<const MtCorpus> corpus;
  nlohmann::json settings;
};

/// Loads a checkpoint written by `normlab train mt` (checkpoint_best, checkpoint_last, checkpoint{N}, or
/// an `average-checkpoints` output) with the prepared corpus `data` ("" = the folder it was trained on),
/// on the process's run_device() (the global `normlab --device`, whatever device wrote the checkpoint).
/// Throws std::runtime_error when the file is not an mt checkpoint, or when the corpus's dictionaries
/// differ in size from the checkpoint's embeddings (naming both sizes: wrong --data folder).
MtModel load_mt_model(const std::filesystem::path& checkpoint, const std::string& data);

/// A new translation task (see the file comment).
std::unique_ptr<Task> make_mt_task();

}  // namespace nlapp
