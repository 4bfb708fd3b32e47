#pragma once
// Generated blocks inside hand-written markdown: README.md and docs/*.md hold result tables only as
//   <!-- normlab report NAME -->
//   ...what `normlab report` generates for NAME...
//   <!-- end normlab report -->
// so every number in them comes from the results registry and a test can check that they are current.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace nlapp {

/// One generated block found in a file.
struct DocBlock {
  std::filesystem::path file;
  std::string name;
  bool changed = false;  ///< the file's content differs from what the generator gives
};

/// Rewrites (or with `check_only`, compares) every block of `files`: its content becomes
/// generate(name) (a trailing newline added when missing). Returns every block found. Throws
/// std::runtime_error naming the file and line for an unterminated block, a nested one, or a NAME that
/// `generate` rejects (it throws std::invalid_argument for unknown names). Files without blocks are
/// left untouched; changed files are written atomically.
std::vector<DocBlock> update_doc_blocks(const std::vector<std::filesystem::path>& files,
                                        const std::function<std::string(const std::string&)>& generate,
                                        bool check_only);

/// README.md and every docs/*.md under `root` that exist, sorted.
std::vector<std::filesystem::path> doc_files(const std::filesystem::path& root);

}  // namespace nlapp
