#include "data/text/prepare.h"

#include <fstream>
#include <stdexcept>

#include "data/text/corpus_summary.h"
#include "data/text/token_dataset.h"

namespace nl::data {

std::vector<std::string> prepare_task_names() {
  return {"multi30k", "iwslt14", "iwslt15", "sst5", "rt", "ptb-lm", "tinyshakespeare", "ud-ewt", "ptb-dep"};
}

nlohmann::json write_split(const PrepareOptions& opts, const std::string& name, const std::string& file,
                           const std::vector<std::vector<int32_t>>& seqs, int64_t n_unk, int64_t vocab) {
  write_token_dataset(opts.out_dir / file, seqs, vocab);
  return summarize_sequences(name, file, seqs, n_unk, vocab);
}

nlohmann::json prepare_task(const std::string& task, const PrepareOptions& opts) {
  if (opts.data_dir.empty() || !std::filesystem::is_directory(opts.data_dir))
    throw std::runtime_error("--data " + opts.data_dir.string() +
                             ": not a directory; pass the data set's folder (e.g. shared/data/multi30k)");
  if (opts.out_dir.empty()) throw std::runtime_error("--out is empty; pass a folder for the prepared files");
  std::filesystem::create_directories(opts.out_dir);
  nlohmann::json s;
  if (task == "multi30k" || task == "iwslt14" || task == "iwslt15") s = prepare_mt(task, opts);
  else if (task == "sst5" || task == "rt") s = prepare_classification(task, opts);
  else if (task == "ptb-lm" || task == "tinyshakespeare") s = prepare_lm(task, opts);
  else if (task == "ud-ewt" || task == "ptb-dep") s = prepare_conllu(task, opts);
  else {
    std::string names;
    for (const auto& n : prepare_task_names()) names += (names.empty() ? "" : ", ") + n;
    throw std::runtime_error("unknown task \"" + task + "\"; choose one of: " + names);
  }
  s["task"] = task;
  s["data"] = opts.data_dir.string();
  s["out"] = opts.out_dir.string();
  s["format"] = "NLTOKDS1 (docs/data-format.md)";
  s["options"] = {{"direction", opts.direction},   {"subword", opts.subword},     {"vocab_size", opts.vocab_size},
                  {"joint", opts.joint},           {"threshold", opts.threshold}, {"nwords", opts.nwords},
                  {"padding_factor", opts.padding_factor}, {"seed", opts.seed}, {"text", opts.text},
                  {"format", opts.format},         {"copy", opts.copy}};
  std::ofstream f(opts.out_dir / "summary.json");
  f << s.dump(2) << "\n";
  if (!f) throw std::runtime_error((opts.out_dir / "summary.json").string() + ": write failed");
  return s;
}

}  // namespace nl::data
