#include "report/record_files.h"

#include <algorithm>

namespace nlapp {
namespace fs = std::filesystem;

std::vector<fs::path> record_files(const fs::path& dir, const std::function<bool(const std::string& name)>& keep) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file() && keep(e.path().filename().string())) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::function<bool(const std::string&)> name_matches(std::string prefix, std::string suffix) {
  return [prefix = std::move(prefix), suffix = std::move(suffix)](const std::string& n) {
    return n.size() >= prefix.size() + suffix.size() && n.compare(0, prefix.size(), prefix) == 0 &&
           n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
}

}  // namespace nlapp
