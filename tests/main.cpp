// Catch2 entry point for the whole suite (one binary; ctest runs each TEST_CASE on its own). Like the
// normlab binary, it first makes sure OpenBLAS runs the kernels this CPU supports (blas_kernels.h).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "backends/runtime.h"

int main(int argc, char** argv) {
  nl::ensure_blas_kernels(argv);
  return Catch::Session().run(argc, argv);
}
