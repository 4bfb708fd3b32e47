#include "tensor/cast_cache.h"

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace nl {
namespace {

struct Key {
  const Storage* storage;
  int64_t offset;
  Shape shape;
  Strides strides;
  DType dtype;
  bool operator<(const Key& o) const {
    return std::tie(storage, offset, shape, strides, dtype) < std::tie(o.storage, o.offset, o.shape, o.strides, o.dtype);
  }
};
struct Entry {
  std::weak_ptr<Storage> source;  // the weight's storage: an address may be reused once it is freed
  uint64_t version = 0;
  Tensor copy;
};
struct Cache {
  std::mutex mu;
  std::map<Key, Entry> entries;
  size_t casts = 0;
};
Cache& cache() {
  static auto* c = new Cache();  // never destroyed: tensors may outlive static teardown
  return *c;
}

}  // namespace

Tensor cached_cast(const Tensor& w, DType dtype) {
  if (!w.defined()) throw std::invalid_argument("cached_cast: undefined tensor");
  if (w.dtype() == dtype) return w;
  Key key{w.storage().get(), w.offset(), w.shape(), w.strides(), dtype};
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> l(c.mu);
    auto it = c.entries.find(key);
    if (it != c.entries.end() && it->second.source.lock() == w.storage() && it->second.version == w.version())
      return it->second.copy;
  }
  // Cast outside the lock (it may take a while and may run kernels on a device).
  const uint64_t version = w.version();
  Tensor copy = w.to(dtype).contiguous();
  std::lock_guard<std::mutex> l(c.mu);
  for (auto it = c.entries.begin(); it != c.entries.end();)  // drop copies of freed weights
    it = it->second.source.expired() ? c.entries.erase(it) : std::next(it);
  c.entries[key] = Entry{w.storage(), version, copy};
  ++c.casts;
  return copy;
}

void clear_cast_cache() {
  std::lock_guard<std::mutex> l(cache().mu);
  cache().entries.clear();
}

CastCacheStats cast_cache_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> l(c.mu);
  CastCacheStats s;
  s.entries = c.entries.size();
  s.casts = c.casts;
  for (const auto& [k, e] : c.entries) s.bytes += (size_t)e.copy.numel() * dtype_size(e.copy.dtype());
  return s;
}

}  // namespace nl
