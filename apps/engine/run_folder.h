#pragma once
// A run's --out folder as one run owns it: an exclusive lock while the run writes there (a second
// normlab process is refused naming the holder's pid), the refusal to replace another run's records
// without --overwrite, and the clean-up of temporary checkpoint files that a killed run left behind.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nlapp {

/// Creates the folder OUT (and its parents) if missing. Throws std::runtime_error "--out OUT is a file,
/// not a folder; choose another --out" when OUT (or a parent of it, then named too) is a regular file, or
/// "cannot create --out OUT: <OS error>; choose another --out" on any other failure.
void create_out_folder(const std::filesystem::path& out);

/// Holds OUT/.normlab.lock (flock, exclusive; released by the destructor or when the process dies, so a
/// kill -9 leaves no stale lock) with this process's pid written in it.
class RunFolderLock {
 public:
  /// Creates OUT if needed (create_out_folder, whose errors it throws) and takes the lock. Throws
  /// std::runtime_error "--out OUT is in use by another normlab run (pid N); wait for it to finish or
  /// choose another --out" when another process holds it, or naming the OS error when the lock file
  /// cannot be created.
  explicit RunFolderLock(const std::filesystem::path& out);
  ~RunFolderLock();
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;

 private:
  int fd_ = -1;
};

/// The files a training run writes into OUT that another run must not replace silently: results.json,
/// metrics.jsonl and checkpoint*.safetensors. Returns their names (results.json, metrics.jsonl, then the
/// checkpoints by name; empty when OUT holds none).
std::vector<std::string> run_records(const std::filesystem::path& out);

/// For a new run (not a resume) into OUT: throws std::runtime_error naming the records OUT already
/// holds, and the fixes (--resume to continue that run, --overwrite to replace it, another --out), unless
/// `overwrite`, in which case it removes them (and config.json) so that no record of the old run mixes
/// with the new one's.
void claim_run_folder(const std::filesystem::path& out, bool overwrite);

/// Removes the temporary files `.checkpoint*.tmp.*` that an interrupted checkpoint write left in OUT
/// (nl::save_checkpoint's; call only while holding the folder's lock). Returns how many were removed.
int remove_stale_checkpoint_temps(const std::filesystem::path& out);

/// The number in a checkpoint file name: "checkpoint{E}.safetensors" (epoch files) or
/// "checkpoint_{E}_{U}.safetensors" (update files, numbered by U); -1 for any other file.
int64_t checkpoint_number(const std::string& file_name, bool epoch_files);

/// Keeps the newest `keep` epoch (or update) checkpoints in `dir` and removes the older ones; keep <= 0
/// keeps all (--keep-last-epochs / --keep-last).
void prune_checkpoints(const std::filesystem::path& dir, int64_t keep, bool epoch_files);

}  // namespace nlapp
