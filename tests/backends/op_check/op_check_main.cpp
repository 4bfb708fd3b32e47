// normlab_op_check: the op-by-op comparison (op_check.h) as a program, for scripts/gpu-check.sh.
//   normlab_op_check [--self-test] [--filter TEXT] [--time REPS] [--json FILE]
// Compares every kernel of the CUDA backend (cuda:0) with the CPU backend for each dtype row and prints
// one line per (op, dtype): NMSE, bound, PASS/FAIL and, with --time, the median device milliseconds of
// one call (its output allocation and poison fill included). --self-test runs it against the fake device
// (the CPU core kernels in the CUDA slot, fused kernels composite) instead: no GPU needed. Exit status: 0
// all rows pass, 1 a row failed, 77 no CUDA device (without --self-test), 2 bad arguments.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/core_only_backend.h"
#include "backends/op_check/op_check.h"
#ifdef NORMLAB_WITH_CUDA
#include "backends/cuda/cuda_entry.h"
#endif

using namespace nltest::opcheck;

int main(int argc, char** argv) {
  bool self_test = false;
  std::string filter, json_path;
  int reps = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "normlab_op_check: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--self-test") self_test = true;
    else if (a == "--filter") filter = value();
    else if (a == "--time") reps = std::atoi(value().c_str());
    else if (a == "--json") json_path = value();
    else {
      std::fprintf(stderr, "normlab_op_check: unknown argument '%s' (--self-test, --filter TEXT, --time REPS, --json FILE)\n",
                   a.c_str());
      return 2;
    }
  }
  std::unique_ptr<nltest::FakeDevice> fake;
  if (self_test) fake = std::make_unique<nltest::FakeDevice>();
  if (nl::device_count(nl::DeviceType::CUDA) == 0) {
#ifdef NORMLAB_WITH_CUDA
    const std::string why = nl::cuda::device_status();
#else
    const std::string why = "normlab was built without nvcc";
#endif
    std::printf("normlab_op_check: no CUDA device (%s); run with --self-test to check the harness on the fake device\n",
                why.c_str());
    return 77;
  }
  const auto results = run_op_checks(nl::Device::cuda(0), op_check_dtypes(), filter, reps);
  int failed = 0;
  nlohmann::json js = nlohmann::json::array();
  std::printf("%-34s %-8s %12s %10s %-6s %s\n", "op", "dtype", "nmse", "bound", "result", reps ? "device ms" : "");
  for (const Result& r : results) {
    failed += !r.pass;
    std::printf("%-34s %-8s %12.3e %10.1e %-6s", r.op.c_str(), r.dtype.c_str(), r.nmse, r.tol, r.pass ? "PASS" : "FAIL");
    if (r.device_ms >= 0) std::printf(" %10.4f", r.device_ms);
    if (!r.error.empty()) std::printf("  error: %s", r.error.c_str());
    std::printf("\n");
    js.push_back({{"op", r.op}, {"dtype", r.dtype}, {"nmse", r.nmse}, {"bound", r.tol}, {"pass", r.pass},
                  {"error", r.error}, {"device_ms", r.device_ms}});
  }
  std::printf("op check (%s): %zu rows, %d failed\n", self_test ? "fake device" : "cuda:0 vs cpu", results.size(), failed);
  if (!json_path.empty()) std::ofstream(json_path) << js.dump(1) << "\n";
  return failed ? 1 : 0;
}
