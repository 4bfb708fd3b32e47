// main() of normlab_cuda_tests: without a CUDA device (no GPU, no driver, or normlab built without
// nvcc) every test exits with 77, which ctest reports as Skipped (SKIP_RETURN_CODE 77 in
// tests/CMakeLists.txt). Listing the tests (catch_discover_tests at build time) needs no GPU.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>

#include "backends/backend.h"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::strncmp(argv[i], "--list", 6) == 0;
  if (!listing && nl::device_count(nl::DeviceType::CUDA) == 0) {
    std::printf("NORMLAB_SKIP: no CUDA device (%s); the CUDA tests need a GPU\n",
                nl::backend_built(nl::DeviceType::CUDA) ? "the driver reports none"
                                                        : "normlab was built without nvcc");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
