#include "common/output_listing.h"

#include <algorithm>
#include <vector>

namespace nlapp {
namespace fs = std::filesystem;

std::string written_listing(const fs::path& out) {
  std::vector<std::string> files, dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    (e.is_directory(ec) ? dirs : files).push_back(name);
  }
  if (files.empty() && dirs.empty()) return "written: nothing in " + out.string();
  std::sort(files.begin(), files.end());
  std::sort(dirs.begin(), dirs.end());
  std::string s;
  for (const auto& f : files) s += (s.empty() ? "" : ", ") + f;
  for (const auto& d : dirs) s += (s.empty() ? "" : ", ") + d + "/";
  return "written: " + (out / "").string() + ": " + s;
}

}  // namespace nlapp
