// The OpenBLAS kernel check (src/backends/cpu/blas_kernels.h): which fallbacks are replaced, and that this
// test binary — whose main() calls ensure_blas_kernels like the normlab binary — runs kernels its CPU suits.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "backends/cpu/blas_kernels.h"
#include "cli_util.h"

TEST_CASE("blas kernels: generic fallbacks are upgraded to what the CPU supports", "[blas]") {
  CHECK(nl::blas_kernel_upgrade("Prescott", true, true) == "SkylakeX");    // Emerald Rapids on OpenBLAS 0.3.21
  CHECK(nl::blas_kernel_upgrade("Prescott", false, true) == "Haswell");    // an AVX2 CPU it does not know
  CHECK(nl::blas_kernel_upgrade("Prescott", false, false).empty());        // nothing better to ask for
  CHECK(nl::blas_kernel_upgrade("NEHALEM", true, true) == "SkylakeX");     // names compare case-insensitively
  CHECK(nl::blas_kernel_upgrade("Sandybridge", false, true) == "Haswell");
}

TEST_CASE("blas kernels: a kernel set OpenBLAS chose on purpose is kept", "[blas]") {
  for (const char* k : {"SkylakeX", "Cooperlake", "Haswell", "Zen", "SapphireRapids", "ARMV8", ""})
    CHECK(nl::blas_kernel_upgrade(k, true, true).empty());
}

TEST_CASE("blas kernels: this process runs kernels its CPU suits", "[blas]") {
  const std::string name = nl::blas_kernel_name();
  INFO("OpenBLAS kernels: " << name << "; OPENBLAS_CORETYPE="
                            << (std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "(unset)"));
  CHECK_FALSE(name.empty());
  // Either OpenBLAS detected this CPU itself, or main() restarted the binary with the upgrade (SkylakeX or
  // Haswell); any other OPENBLAS_CORETYPE is the user's explicit choice and not checked.
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  const std::string f = forced ? forced : "";
  if (f.empty() || f == "SkylakeX" || f == "Haswell") CHECK(nl::blas_kernel_upgrade_for(name).empty());
}

TEST_CASE("blas kernels: the normlab binary restarts itself onto kernels its CPU suits", "[blas][cli]") {
  ::unsetenv("OPENBLAS_CORETYPE");  // as a user's shell: let the binary decide (ctest runs each case alone)
  const auto [rc, text] = nltest::run_cli("--version");
  INFO(text);
  REQUIRE(rc == 0);
  const std::string key = "(OpenBLAS kernels: ";
  const auto at = text.find(key);
  REQUIRE(at != std::string::npos);
  const std::string name = text.substr(at + key.size(), text.find(')', at) - at - key.size());
  CHECK_FALSE(name.empty());
  CHECK(nl::blas_kernel_upgrade_for(name).empty());
}
