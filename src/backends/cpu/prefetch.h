#pragma once
// Software prefetch of memory a kernel will read or write soon, where the hardware prefetchers cannot
// guess the addresses: the next products of a grid of small GEMMs (strided rows of larger tensors), table
// rows gathered in a data-dependent order.
#include <cstdint>

namespace nl::cpu {

/// Asks for the `rows` rows of `bytes` bytes at p (rows `ld` bytes apart) to be brought into the caches:
/// one prefetch per 64-byte step from each row's start and one for its last byte; `write` for memory
/// that will be written (prefetchw).
inline void prefetch_block(const void* p, int64_t rows, int64_t bytes, int64_t ld, bool write) {
  for (int64_t r = 0; r < rows; ++r) {
    const char* row = static_cast<const char*>(p) + r * ld;
    for (int64_t c = 0; c < bytes; c += 64) write ? __builtin_prefetch(row + c, 1) : __builtin_prefetch(row + c);
    write ? __builtin_prefetch(row + bytes - 1, 1) : __builtin_prefetch(row + bytes - 1);
  }
}

}  // namespace nl::cpu
