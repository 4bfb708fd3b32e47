#pragma once
// Shared by the bfloat16 tests (conversion, products, autocast, e2e): the skip for a build without oneDNN
// and a scoped environment variable (NORMLAB_BF16_FALLBACK forces the emulated CPU path).
#include <cstdlib>
#include <iostream>

#include "backends/mixed_precision.h"
#include "test_paths.h"

/// Skips the test case (the ctest skip marker) when this normlab has no bfloat16 products on the CPU.
#define NL_SKIP_WITHOUT_ONEDNN()                                                                             \
  do {                                                                                                       \
    if (!nl::cpu_bf16_products_available()) {                                                                \
      std::cout << nltest::kSkipMarker << " normlab was built without oneDNN (libdnnl-dev)" << std::endl; \
      return;                                                                                                \
    }                                                                                                        \
  } while (0)

namespace nltest {

/// Sets environment variable `name` to `value` for the guard's scope, unsetting it after.
struct EnvGuard {
  const char* name;
  EnvGuard(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
  ~EnvGuard() { unsetenv(name); }
};

}  // namespace nltest
