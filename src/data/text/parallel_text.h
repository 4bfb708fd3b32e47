#pragma once
// Parallel corpora for machine translation: two line-aligned files (line i of the source file is the
// translation of line i of the target file), and fairseq's handling of already-BPE'd text.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "data/text/line_reader.h"

namespace nl::data {

/// Source and target sentences, aligned by index.
struct ParallelCorpus {
  std::vector<std::string> source;
  std::vector<std::string> target;
  std::size_t size() const { return source.size(); }
};

/// Reads both files (plain or .gz; BOM and missing final newline accepted). Throws std::runtime_error
/// naming both files and both line counts when they differ, or naming file and line on invalid UTF-8.
ParallelCorpus read_parallel(const std::filesystem::path& source_path, const std::filesystem::path& target_path,
                             ReadOptions opts = {});

/// Removes subword-nmt continuation markers as fairseq's --remove-bpe does:
/// (line + " ").replace(marker, "").rstrip(), with marker "@@ " by default ("hel@@ lo" -> "hello").
std::string remove_bpe(std::string_view line, std::string_view marker = "@@ ");

}  // namespace nl::data
