// The global --device option of the normlab binary: checked before any command runs, with an error
// that names the problem and the fix; a device that exists reaches the run's settings.
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "cli_util.h"
#include "tensor/device.h"
#include "test_paths.h"

using Catch::Contains;
using nltest::run_cli;

TEST_CASE("device option: a bad device name or a missing GPU stops before the command runs", "[backend][cli]") {
  auto [rc, out] = run_cli("--device gpu train mnist");
  CHECK(rc == 1);
  CHECK_THAT(out, Contains("unknown device 'gpu'") && Contains("cpu, cuda or cuda:N"));
  auto [rc2, out2] = run_cli("--device cuda:0 train mnist --data /nonexistent-mnist");
  CHECK(rc2 == 1);
  if (nl::device_count(nl::DeviceType::CUDA) == 0) {
    CHECK_THAT(out2, Contains("no CUDA device") && Contains("use --device cpu"));
  } else {  // accepted: the command runs and stops at the missing data instead
    CHECK_THAT(out2, Contains("/nonexistent-mnist"));
    CHECK_THAT(out2, !Contains("no CUDA device"));
  }
  auto [rc3, out3] = run_cli("--device cuda:99 train mnist");
  CHECK(rc3 == 1);
  CHECK_THAT(out3, Contains("no CUDA device") || Contains("cuda:99 does not exist"));
}

TEST_CASE("device option: a negative or malformed CUDA index is refused by the device parser", "[backend][cli]") {
  CHECK_THROWS_WITH(nl::parse_device("cuda:-1"),
                    Contains("invalid device 'cuda:-1': a CUDA device index cannot be negative") && Contains("cuda:N"));
  for (const char* bad : {"cuda:", "cuda:x", "cuda:1x", "cuda:+1", "cuda: 1", "cpu:1"})
    CHECK_THROWS_WITH(nl::parse_device(bad), Contains(std::string("unknown device '") + bad + "'"));
  CHECK(nl::parse_device("cuda:3") == nl::Device::cuda(3));
  CHECK(nl::parse_device("cuda") == nl::Device::cuda(0));
  CHECK(nl::parse_device("cpu").is_cpu());
  auto [rc, out] = run_cli("--device cuda:-1 train mnist");
  CHECK(rc == 1);
  CHECK_THAT(out, Contains("a CUDA device index cannot be negative"));
}

TEST_CASE("device option: the run records the device it trained on", "[backend][cli]") {
  const std::filesystem::path raw = nltest::data_path("mnist");
  NL_SKIP_IF_MISSING(raw / "train-images-idx3-ubyte.gz");
  const auto out = std::filesystem::temp_directory_path() / ("normlab-device-option-" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  auto [rc, text] = run_cli("--device cpu train mnist --data " + raw.string() + " --out " + out.string() +
                            " --hidden 8 --max-update 1 --quiet");
  INFO(text);
  REQUIRE(rc == 0);
  std::ifstream f(out / "results.json");
  const auto res = nlohmann::json::parse(f);
  CHECK(res["settings"]["device"] == "cpu");
  std::filesystem::remove_all(out);
}

TEST_CASE("device option: a CPU run maps neither the CUDA runtime nor cuBLAS", "[backend][cli]") {
  // The dynamic loader lists every library it opens (LD_DEBUG=libs); the CUDA module, cudart and cuBLAS are
  // opened on the first use of a CUDA device only (backends/cuda_loader.cpp).
  auto [rc, out] = run_cli("--help", "LD_DEBUG=libs");
  CHECK(rc == 0);
  REQUIRE_THAT(out, Contains("libstdc++"));  // the loader's trace is there
  CHECK_THAT(out, !Contains("libcudart") && !Contains("libcublas") && !Contains("libnormlab_cuda") &&
                      !Contains("libnccl"));
}

#ifdef NORMLAB_WITH_CUDA
TEST_CASE("device option: a missing CUDA module is a clear error naming the paths and the fix", "[backend][cli]") {
  auto [rc, out] = run_cli("--device cuda train mnist", "NORMLAB_CUDA_MODULE=/nonexistent/libnormlab_cuda.so");
  CHECK(rc == 1);
  CHECK_THAT(out, Contains("cannot load the CUDA backend module") && Contains("/nonexistent/libnormlab_cuda.so") &&
                      Contains("NORMLAB_CUDA_MODULE") && Contains("use --device cpu"));
}
#endif

TEST_CASE("device option: without a GPU the CUDA tests skip, and fail under NORMLAB_REQUIRE_GPU=1",
          "[backend][cli]") {
  if (nl::device_count(nl::DeviceType::CUDA) > 0) SUCCEED("a GPU is present: the CUDA tests run");
  else {
    auto [rc, out] = run_cli("", "", NORMLAB_CUDA_TESTS_BINARY);
    CHECK(rc == 77);
    CHECK_THAT(out, Contains("NORMLAB_SKIP: no CUDA device"));
    auto [rc2, out2] = run_cli("", "NORMLAB_REQUIRE_GPU=1", NORMLAB_CUDA_TESTS_BINARY);
    CHECK(rc2 == 1);
    CHECK_THAT(out2, Contains("NORMLAB_REQUIRE_GPU=1") && Contains("no usable CUDA device"));
  }
}
