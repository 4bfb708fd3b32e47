// main() of normlab_cuda_tests: without a CUDA device (no GPU, no driver, a driver too old for the
// runtime, or normlab built without nvcc) every test exits with 77, which ctest reports as Skipped
// (SKIP_RETURN_CODE 77 in tests/CMakeLists.txt), with the reason. NORMLAB_REQUIRE_GPU=1 (set by
// scripts/gpu-check.sh) turns that skip into a failure (exit 1): on a machine that has a GPU, a skipped
// CUDA test is a defect. Listing the tests (catch_discover_tests at build time) needs no GPU.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/backend.h"
#ifdef NORMLAB_WITH_CUDA
#include "backends/cuda/cuda_entry.h"
#endif

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::strncmp(argv[i], "--list", 6) == 0;
  if (!listing && nl::device_count(nl::DeviceType::CUDA) == 0) {
#ifdef NORMLAB_WITH_CUDA
    const std::string why = nl::cuda::device_status();
#else
    const std::string why = "normlab was built without nvcc";
#endif
    const char* req = std::getenv("NORMLAB_REQUIRE_GPU");
    if (req && std::strcmp(req, "1") == 0) {
      std::printf("FAILED: NORMLAB_REQUIRE_GPU=1 but there is no usable CUDA device: %s\n", why.c_str());
      return 1;
    }
    std::printf("NORMLAB_SKIP: no CUDA device (%s); the CUDA tests need a GPU (NORMLAB_REQUIRE_GPU=1 makes "
                "this a failure)\n", why.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
