#include "report/doc_blocks.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "report/atomic_file.h"

namespace nlapp {
namespace fs = std::filesystem;

namespace {
const std::string kBegin = "<!-- normlab report ";
const std::string kEnd = "<!-- end normlab report -->";
}  // namespace

std::vector<DocBlock> update_doc_blocks(const std::vector<fs::path>& files,
                                        const std::function<std::string(const std::string&)>& generate, bool check_only) {
  std::vector<DocBlock> found;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) throw std::runtime_error("cannot read " + f.string());
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::ostringstream out;
    bool any = false, changed_file = false;
    for (size_t i = 0; i < lines.size(); ++i) {
      out << lines[i] << "\n";
      if (lines[i].rfind(kBegin, 0) != 0) continue;
      const std::string where = f.string() + ":" + std::to_string(i + 1);
      const auto close = lines[i].find(" -->");
      if (close == std::string::npos || close <= kBegin.size())
        throw std::runtime_error(where + ": a block opens with '<!-- normlab report NAME -->'");
      DocBlock b{f, lines[i].substr(kBegin.size(), close - kBegin.size())};
      size_t j = i + 1;
      std::string old;
      for (; j < lines.size() && lines[j] != kEnd; ++j) {
        if (lines[j].rfind(kBegin, 0) == 0) throw std::runtime_error(where + ": block '" + b.name + "' is not closed before the next one");
        old += lines[j] + "\n";
      }
      if (j == lines.size()) throw std::runtime_error(where + ": block '" + b.name + "' has no closing '" + kEnd + "'");
      std::string fresh;
      try {
        fresh = generate(b.name);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(where + ": " + e.what());
      }
      if (!fresh.empty() && fresh.back() != '\n') fresh += "\n";
      b.changed = fresh != old;
      changed_file = changed_file || b.changed;
      out << fresh << kEnd << "\n";
      i = j;
      any = true;
      found.push_back(b);
    }
    if (any && changed_file && !check_only) write_file_atomic(f, out.str());
  }
  return found;
}

std::vector<fs::path> doc_files(const fs::path& root) {
  std::vector<fs::path> v;
  if (fs::exists(root / "README.md")) v.push_back(root / "README.md");
  if (fs::is_directory(root / "docs"))
    for (const auto& e : fs::directory_iterator(root / "docs"))
      if (e.is_regular_file() && e.path().extension() == ".md") v.push_back(e.path());
  std::sort(v.begin() + (v.empty() || v.front().filename() != "README.md" ? 0 : 1), v.end());
  return v;
}

}  // namespace nlapp
