#pragma once
// `normlab data prepare <task>`: read a data set once, tokenize it, and write the prepared files
// (token binaries in the format of token_dataset.h, fairseq dict.*.txt files, the SentencePiece model
// where one is trained, summary.json). The app command is a thin CLI layer over prepare_task().
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nl::data {

/// Options of `normlab data prepare` (each task uses the ones that apply; docs/data.md lists them).
struct PrepareOptions {
  std::filesystem::path data_dir;  ///< the data set's folder (e.g. .../shared/data/multi30k)
  std::filesystem::path out_dir;   ///< created if missing (see prepare_task)
  std::string direction;           ///< MT: "src-tgt", e.g. "en-de" (empty = task default)
  std::string subword;             ///< MT: "bpe", "unigram" (SentencePiece) or "none" (empty = task default)
  int vocab_size = 8000;           ///< SentencePiece vocabulary size
  bool joint = true;               ///< MT: one dictionary (and spm model) shared by both languages
  int64_t threshold = 0;           ///< dictionary frequency threshold (keep symbols with count >= threshold)
  int64_t nwords = -1;             ///< dictionary size cap incl. specials (-1 = none)
  int padding_factor = 1;          ///< pad dictionary size to a multiple of this (fairseq: 8)
  uint64_t seed = 1;               ///< RT split and SentencePiece sampling
  std::string text = "raw";        ///< multi30k: "raw" (cased) or "tok" (lowercased Moses-tokenized)
  std::string format = "sentences";  ///< sst5: "sentences" (LABEL ||| text) or "trees"
  std::string copy = "kim";        ///< rt: "kim" (Latin-1 copy) or "nltk" (utf8/ copy)
};

/// Names of the supported tasks.
std::vector<std::string> prepare_task_names();

/// Runs one task and returns its summary (also written to out_dir/summary.json). The task writes into a
/// hidden folder beside out_dir whose files are moved into out_dir (created if missing; same-named files
/// replaced) only when the task succeeds, so a failure leaves no new or partial folder or file. Throws
/// std::runtime_error naming the missing or malformed file and the fix (e.g. rt: RT files with too few
/// lines for its fixed split, naming both files and their line counts), or an unknown task/option.
nlohmann::json prepare_task(const std::string& task, const PrepareOptions& opts);

// Task implementations (one per data-set family), used by prepare_task.
nlohmann::json prepare_mt(const std::string& task, const PrepareOptions& opts);
nlohmann::json prepare_classification(const std::string& task, const PrepareOptions& opts);
nlohmann::json prepare_lm(const std::string& task, const PrepareOptions& opts);
nlohmann::json prepare_conllu(const std::string& task, const PrepareOptions& opts);

/// Returns `p` if it exists, else throws std::runtime_error naming it and saying that --data must be the
/// data set's folder containing it.
std::filesystem::path require_data_file(const std::filesystem::path& p);

/// Writes `seqs` to out_dir/file and returns summarize_sequences(name, file, ...).
nlohmann::json write_split(const PrepareOptions& opts, const std::string& name, const std::string& file,
                           const std::vector<std::vector<int32_t>>& seqs, int64_t n_unk, int64_t vocab);

}  // namespace nl::data
