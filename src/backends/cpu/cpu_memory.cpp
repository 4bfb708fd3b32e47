// CPU caching allocator: freed blocks are kept in per-size-class free lists and handed out again, so a
// training loop stops asking the OS for fresh pages after the first step (allocation dominated small
// models' step time before this). Blocks are 64-byte aligned for AVX-512 loads. A large block that the
// machine's free memory cannot hold is refused with an error naming the sizes (an absurd --d-model would
// otherwise fill the memory while initialising and be killed by the OOM killer, its run folder half written).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <unistd.h>

#include "backends/cpu/cpu_backend.h"

namespace nl {
namespace {

size_t size_class(size_t n) {
  if (n <= 4096) return (n + 63) & ~size_t(63);
  // Four classes per power of two above 4 KiB: at most 25% slack.
  size_t p = 4096;
  while (p * 2 < n) p *= 2;
  size_t q = p / 4;
  return (n + q - 1) / q * q;
}

// The number after `key` in a file of "key number [unit]" lines (/proc/meminfo, a cgroup's memory.stat);
// false when the file or the key is missing.
bool read_keyed(const char* path, const char* key, unsigned long long& value) {
  FILE* f = std::fopen(path, "r");
  if (!f) return false;
  char k[64];
  unsigned long long v = 0;
  bool found = false;
  while (!found && std::fscanf(f, "%63s %llu%*[^\n]", k, &v) == 2) found = std::strcmp(k, key) == 0;
  std::fclose(f);
  if (found) value = v;
  return found;
}
// The single number in a file (a cgroup's memory.max, memory.current); false for "max" or a missing file.
bool read_number(const char* path, unsigned long long& value) {
  FILE* f = std::fopen(path, "r");
  if (!f) return false;
  const bool ok = std::fscanf(f, "%llu", &value) == 1;
  std::fclose(f);
  return ok;
}

// Bytes of memory this process can use in all: what it holds now (its resident pages, /proc/self/statm) plus
// what the machine has free (MemAvailable + SwapFree of /proc/meminfo, and no more than a cgroup v2 limit
// leaves, memory.max - memory.current + its page cache, which the kernel reclaims before it refuses memory;
// the process's own cgroup where the cgroup namespace shows it at the root); SIZE_MAX where these cannot be
// read (not Linux).
size_t usable_memory_bytes() {
  size_t avail = SIZE_MAX;
  unsigned long long mem_kb = 0, swap_kb = 0, max = 0, cur = 0, file = 0;
  if (read_keyed("/proc/meminfo", "MemAvailable:", mem_kb)) {
    read_keyed("/proc/meminfo", "SwapFree:", swap_kb);
    avail = size_t((mem_kb + swap_kb) * 1024ull);
  }
  if (read_number("/sys/fs/cgroup/memory.max", max) && read_number("/sys/fs/cgroup/memory.current", cur)) {
    read_keyed("/sys/fs/cgroup/memory.stat", "file", file);
    avail = std::min<size_t>(avail, max + file > cur ? size_t(max + file - cur) : 0);
  }
  if (avail == SIZE_MAX) return avail;
  unsigned long long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%llu %llu", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return avail + size_t(resident) * size_t(sysconf(_SC_PAGESIZE));
}

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(size_t(1) << 30));
  return buf;
}

struct CachingAllocator {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free_lists;
  size_t cached_bytes = 0, live_bytes = 0;
  static constexpr size_t kMaxCached = size_t(4) << 30;
  static constexpr size_t kCheckFreeFrom = size_t(64) << 20;  // blocks from this size are checked against free memory

  void* get(size_t n) {
    size_t c = size_class(n);
    {
      std::lock_guard<std::mutex> l(mu);
      auto it = free_lists.find(c);
      if (it != free_lists.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_bytes -= c;
        live_bytes += c;
        return p;
      }
    }
    if (c >= kCheckFreeFrom) check_fits(c);
    void* p = std::aligned_alloc(64, c);
    if (!p) {
      release_all();
      p = std::aligned_alloc(64, c);
    }
    if (!p)
      throw std::runtime_error("out of memory on cpu: could not allocate " + std::to_string(c) + " bytes (" +
                               std::to_string(live_bytes) + " bytes in use)");
    std::lock_guard<std::mutex> l(mu);
    live_bytes += c;
    return p;
  }
  // Throws std::runtime_error when the tensors' blocks with a fresh one of c bytes would need more memory than
  // the process can use (usable_memory_bytes), after returning this allocator's cached blocks to the OS. The
  // pages of a new block are not touched yet, so the machine's free memory does not count the blocks handed
  // out but not yet written: the check adds them all (live_bytes) instead. Without it the allocations succeed
  // and the writes that fill them swap or are OOM-killed.
  void check_fits(size_t c) {
    auto needed = [&] {
      std::lock_guard<std::mutex> l(mu);
      return live_bytes + cached_bytes + c;
    };
    if (needed() <= usable_memory_bytes()) return;
    release_all();
    const size_t need = needed(), usable = usable_memory_bytes();
    if (need <= usable) return;
    throw std::runtime_error("out of memory on cpu: a tensor of " + gib(c) + " would bring normlab's tensors to " +
                             gib(need) + ", more than the " + gib(usable) +
                             " this process can use on this machine (its own memory and the free memory); make the "
                             "model or the batch smaller (e.g. --d-model, --ffn-dim, --max-tokens, --batch-size) or "
                             "free memory");
  }
  void put(void* p, size_t n) {
    size_t c = size_class(n);
    std::lock_guard<std::mutex> l(mu);
    live_bytes -= c;
    if (cached_bytes + c > kMaxCached) {
      std::free(p);
      return;
    }
    free_lists[c].push_back(p);
    cached_bytes += c;
  }
  void release_all() {
    std::lock_guard<std::mutex> l(mu);
    for (auto& [c, v] : free_lists)
      for (void* p : v) std::free(p);
    free_lists.clear();
    cached_bytes = 0;
  }
};

CachingAllocator& allocator() {
  static auto* a = new CachingAllocator();  // never destroyed: tensors may outlive static teardown
  return *a;
}
}  // namespace

void* CpuBackend::allocate(size_t nbytes, int) { return allocator().get(nbytes); }
void CpuBackend::deallocate(void* p, size_t nbytes, int) { allocator().put(p, nbytes); }
size_t CpuBackend::bytes_cached() const {
  auto& a = allocator();
  std::lock_guard<std::mutex> l(a.mu);
  return a.cached_bytes + a.live_bytes;
}
void CpuBackend::copy_to_host(void* dst, const void* src, size_t n, int) { std::memcpy(dst, src, n); }
void CpuBackend::copy_from_host(void* dst, const void* src, size_t n, int) { std::memcpy(dst, src, n); }

CpuBackend& cpu_backend() {
  static CpuBackend b;
  return b;
}

}  // namespace nl
