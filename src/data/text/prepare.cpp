#include "data/text/prepare.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "data/text/corpus_summary.h"
#include "data/text/token_dataset.h"

namespace nl::data {

namespace fs = std::filesystem;

std::vector<std::string> prepare_task_names() {
  return {"multi30k", "iwslt14", "iwslt15", "sst5", "rt", "ptb-lm", "tinyshakespeare", "ud-ewt", "ptb-dep"};
}

fs::path require_data_file(const fs::path& p) {
  if (!fs::exists(p))
    throw std::runtime_error(p.string() + ": not found; --data must be the data set's folder containing " +
                             p.filename().string());
  return p;
}

nlohmann::json write_split(const PrepareOptions& opts, const std::string& name, const std::string& file,
                           const std::vector<std::vector<int32_t>>& seqs, int64_t n_unk, int64_t vocab) {
  write_token_dataset(opts.out_dir / file, seqs, vocab);
  return summarize_sequences(name, file, seqs, n_unk, vocab);
}

namespace {

// A hidden folder beside --out that a task writes into. commit() moves its files into --out (replacing
// files of the same name, leaving others alone; a missing --out is created by one rename); without
// commit() the destructor removes it and every parent folder it created, so a failed task leaves the
// file system as it found it.
class StagingDir {
 public:
  explicit StagingDir(fs::path out) : out_(std::move(out)) {
    if (out_.filename().empty()) out_ = out_.parent_path();  // "dir/" -> "dir"
    if (fs::exists(out_) && !fs::is_directory(out_))
      throw std::runtime_error("--out " + out_.string() + ": exists and is not a folder; pass a folder path");
    const fs::path parent = out_.has_parent_path() ? out_.parent_path() : fs::path(".");
    for (fs::path p = parent; !p.empty() && !fs::exists(p); p = p.parent_path()) {
      created_top_ = p;
      if (p == p.parent_path()) break;
    }
    fs::create_directories(parent);
    std::string name = out_.filename().string();  // (built with append: "." + name trips GCC 12's -Wrestrict)
    name.insert(0, 1, '.');
    name.append(".partial-").append(std::to_string(::getpid()));
    dir_ = parent / name;
    fs::remove_all(dir_);
    fs::create_directory(dir_);
  }
  ~StagingDir() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
    if (!committed_ && !created_top_.empty()) fs::remove_all(created_top_, ec);
  }
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  const fs::path& path() const { return dir_; }

  void commit() {
    if (!fs::exists(out_)) {
      fs::rename(dir_, out_);
    } else {
      for (const auto& e : fs::directory_iterator(dir_)) {
        const fs::path target = out_ / e.path().filename();
        if (fs::is_directory(target)) fs::remove_all(target);
        fs::rename(e.path(), target);
      }
      fs::remove(dir_);
    }
    dir_.clear();
    committed_ = true;
  }

 private:
  fs::path out_, dir_, created_top_;
  bool committed_ = false;
};

}  // namespace

nlohmann::json prepare_task(const std::string& task, const PrepareOptions& opts) {
  if (opts.data_dir.empty() || !fs::is_directory(opts.data_dir))
    throw std::runtime_error("--data " + opts.data_dir.string() +
                             ": not a directory; pass the data set's folder (e.g. shared/data/multi30k)");
  if (opts.out_dir.empty()) throw std::runtime_error("--out is empty; pass a folder for the prepared files");
  const auto names = prepare_task_names();
  if (std::find(names.begin(), names.end(), task) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw std::runtime_error("unknown task \"" + task + "\"; choose one of: " + list);
  }
  StagingDir staging(opts.out_dir);
  PrepareOptions o = opts;
  o.out_dir = staging.path();
  nlohmann::json s;
  if (task == "multi30k" || task == "iwslt14" || task == "iwslt15") s = prepare_mt(task, o);
  else if (task == "sst5" || task == "rt") s = prepare_classification(task, o);
  else if (task == "ptb-lm" || task == "tinyshakespeare") s = prepare_lm(task, o);
  else s = prepare_conllu(task, o);
  s["task"] = task;
  s["data"] = opts.data_dir.string();
  s["out"] = opts.out_dir.string();
  s["format"] = "NLTOKDS1 (docs/data-format.md)";
  s["options"] = {{"direction", opts.direction},   {"subword", opts.subword},     {"vocab_size", opts.vocab_size},
                  {"joint", opts.joint},           {"threshold", opts.threshold}, {"nwords", opts.nwords},
                  {"padding_factor", opts.padding_factor}, {"seed", opts.seed}, {"text", opts.text},
                  {"format", opts.format},         {"copy", opts.copy}};
  {
    std::ofstream f(staging.path() / "summary.json");
    f << s.dump(2) << "\n";
    if (!f) throw std::runtime_error((opts.out_dir / "summary.json").string() + ": write failed (disk full?)");
  }
  staging.commit();
  return s;
}

}  // namespace nl::data
