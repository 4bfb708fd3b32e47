#include "data/text/parallel_text.h"

#include <stdexcept>

namespace nl::data {

ParallelCorpus read_parallel(const std::filesystem::path& source_path, const std::filesystem::path& target_path,
                             ReadOptions opts) {
  ParallelCorpus c;
  c.source = read_lines(source_path, opts);
  c.target = read_lines(target_path, opts);
  if (c.source.size() != c.target.size())
    throw std::runtime_error("parallel corpus is not aligned: " + source_path.string() + " has " +
                             std::to_string(c.source.size()) + " lines but " + target_path.string() + " has " +
                             std::to_string(c.target.size()) +
                             "; line i of one file must translate line i of the other (check that both "
                             "files are the same split and neither was truncated)");
  return c;
}

std::string remove_bpe(std::string_view line, std::string_view marker) {
  std::string s(line);
  s.push_back(' ');
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    if (!marker.empty() && s.compare(i, marker.size(), marker) == 0) {
      i += marker.size();
    } else {
      out.push_back(s[i]);
      ++i;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t' || out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  return out;
}

}  // namespace nl::data
