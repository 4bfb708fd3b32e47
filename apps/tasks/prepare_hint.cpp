#include "tasks/prepare_hint.h"

namespace nlapp {
namespace fs = std::filesystem;

fs::path fresh_prepare_out(const fs::path& dir, const std::string& name) {
  std::error_code ec;
  const fs::path bin = fs::path("data-bin") / name;
  return fs::weakly_canonical(bin, ec) == fs::weakly_canonical(dir, ec) ? fs::path("data-bin") / (name + "-prepared")
                                                                        : bin;
}

std::string raw_data_hint(const fs::path& dir, const std::string& name, const std::string& what) {
  const fs::path out = fresh_prepare_out(dir, name);
  std::string h = "'";  // appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "'" + string + ...
  h += dir.string() + "' holds the raw " + name + " files, not " + what +
       ": prepare them into a folder of their own with `normlab data prepare " + name + " --data " + dir.string() +
       " --out " + out.string() + "`, then pass --data " + out.string();
  return h;
}

}  // namespace nlapp
