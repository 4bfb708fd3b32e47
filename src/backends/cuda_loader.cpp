// Loads the CUDA backend module (libnormlab_cuda.so) on first use and forwards cuda_entry.h to it. A CPU
// run never gets here, so it maps neither cudart nor cuBLAS (issue 27: `normlab --help` of a
// CUDA-enabled build peaked at 224 MiB RSS when they were linked in). Compiled only with
// NORMLAB_WITH_CUDA. Search order (first hit wins; a set NORMLAB_CUDA_MODULE that fails is an error):
//   1. $NORMLAB_CUDA_MODULE (a path to the .so);
//   2. beside the running executable, then ../lib beside it (the install layout);
//   3. the build directory and the install prefix this libnormlab was configured with;
//   4. the dynamic loader's own search (LD_LIBRARY_PATH, the system library paths).
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cuda/cuda_entry.h"
#include "backends/cuda/cuda_plugin_abi.h"

#ifndef NORMLAB_BUILD_ID
#error "NORMLAB_BUILD_ID must be defined (cmake/cuda.cmake)"
#endif

namespace nl::cuda {
namespace {

constexpr const char* kModule = "libnormlab_cuda.so";

std::string exe_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string p(buf, (size_t)n);
  const size_t s = p.rfind('/');
  return s == std::string::npos ? "" : p.substr(0, s);
}

/// The candidate paths in search order (see the file comment); an explicit NORMLAB_CUDA_MODULE is alone.
std::vector<std::string> candidates() {
  if (const char* env = std::getenv("NORMLAB_CUDA_MODULE"); env && *env) return {env};
  std::vector<std::string> c;
  if (const std::string d = exe_dir(); !d.empty()) {
    c.push_back(d + "/" + kModule);
    c.push_back(d + "/../lib/" + kModule);
  }
#ifdef NORMLAB_CUDA_MODULE_BUILD_DIR
  c.push_back(std::string(NORMLAB_CUDA_MODULE_BUILD_DIR) + "/" + kModule);
#endif
#ifdef NORMLAB_CUDA_MODULE_INSTALL_DIR
  c.push_back(std::string(NORMLAB_CUDA_MODULE_INSTALL_DIR) + "/" + kModule);
#endif
  c.push_back(kModule);  // bare name: dlopen's own search
  return c;
}

struct Loaded {
  const PluginTable* table = nullptr;
  std::string path;
  std::string error;  ///< why loading failed (table == nullptr)
};

Loaded load() {
  Loaded r;
  std::string tried;
  for (const std::string& p : candidates()) {
    if (p.find('/') != std::string::npos && access(p.c_str(), F_OK) != 0) {
      tried += "\n  " + p + ": no such file";
      continue;
    }
    void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {  // a file that exists but does not load (cudart / cuBLAS missing) is reported as such
      const char* e = dlerror();
      tried += "\n  " + p + ": " + (e ? e : "dlopen failed");
      if (p.find('/') != std::string::npos) break;
      continue;
    }
    using Entry = const PluginTable* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(h, NORMLAB_CUDA_PLUGIN_SYMBOL));
    const PluginTable* t = entry ? entry() : nullptr;
    if (!t) {
      tried += "\n  " + p + ": not a normlab CUDA module (no " NORMLAB_CUDA_PLUGIN_SYMBOL ")";
      break;
    }
    if (std::string(t->build_id) != NORMLAB_BUILD_ID) {
      tried += "\n  " + p + ": from another build (build id " + t->build_id + ", this program expects " +
               NORMLAB_BUILD_ID + "); rebuild, or set NORMLAB_CUDA_MODULE to the module of this build";
      break;
    }
    r.table = t;
    r.path = p;
    return r;
  }
  r.error = std::string("cannot load the CUDA backend module ") + kModule + " (normlab was built with CUDA; " +
            "the module holds the CUDA kernels and is opened on first use). Tried:" + tried +
            "\nFix: keep " + kModule + " beside the normlab executable (the build puts it there), install it "
            "into <prefix>/lib, or set NORMLAB_CUDA_MODULE=/path/to/" + kModule +
            "; the CUDA runtime and cuBLAS (libcudart, libcublas) must be on the library path";
  return r;
}

const Loaded& loaded() {
  static const Loaded l = load();  // thread-safe, once
  return l;
}
bool& tried_loading() {
  static bool t = false;
  return t;
}
const PluginTable& table() {
  tried_loading() = true;
  const Loaded& l = loaded();
  if (!l.table) throw std::runtime_error(l.error);
  return *l.table;
}
}  // namespace

Backend& backend() { return table().backend(); }

int device_count() {
  tried_loading() = true;
  const Loaded& l = loaded();
  return l.table ? l.table->device_count() : 0;
}

std::string device_status() {
  tried_loading() = true;
  const Loaded& l = loaded();
  return l.table ? l.table->device_status() : l.error;
}

std::string module_path() { return tried_loading() ? loaded().path : std::string(); }

AllocatorStats allocator_stats(int device_index) { return table().allocator_stats(device_index); }

}  // namespace nl::cuda
