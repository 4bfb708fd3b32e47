#pragma once
// Op-by-op comparison of a device backend against the CPU backend, in the manner of ggml's
// test-backend-ops: every Backend kernel (core and fused, forward and backward kernels) runs on the same
// random inputs on the CPU and on the device in the CUDA slot, and each output is compared by NMSE
// (sum (dev - cpu)^2 / sum cpu^2) against a per-op, per-dtype bound; 0 means bit-exact. The table of
// cases (op_check.cpp) is the one list of ops; normlab_op_check (op_check_main.cpp) runs it on a GPU
// (scripts/gpu-check.sh), and the suite runs it against the fake device as a self-test
// (test_op_check.cpp). A dtype is a row; the bfloat16 row holds the ops that take bfloat16 (casts, copies,
// the mixed-precision products), the others have no bfloat16 bound and no such row.
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "tensor/tensor.h"

namespace nltest::opcheck {

/// NMSE bounds of one op per dtype (0: the device must give the CPU's bits; negative: the op does not take
/// that dtype, no row).
struct Tol {
  double f32 = 1e-10, f64 = 1e-24, bf16 = -1;
  double of(nl::DType t) const {
    return t == nl::DType::Float64 ? f64 : t == nl::DType::BFloat16 ? bf16 : f32;
  }
};
/// Bit-exact in float32 and float64 (no bfloat16 row).
constexpr Tol kExact{0.0, 0.0};
/// Bit-exact in every dtype, bfloat16 included (casts and copies).
constexpr Tol kExactAll{0.0, 0.0, 0.0};
/// Only a bfloat16 row, with NMSE bound `b` (the mixed-precision products).
constexpr Tol bf16_only(double b) { return Tol{-1, -1, b}; }

/// One kernel call. `inputs` makes the host inputs for a dtype; `run` calls the kernel of `be` on
/// inputs already on `dev` and returns its outputs (allocated on `dev`).
struct OpCase {
  std::string name;
  Tol tol;
  std::function<std::vector<nl::Tensor>(nl::DType, std::mt19937&)> inputs;
  std::function<std::vector<nl::Tensor>(nl::Backend& be, nl::Device dev, nl::DType,
                                        const std::vector<nl::Tensor>& in)> run;
};

/// Every case, in a fixed order.
const std::vector<OpCase>& op_cases();
/// The dtype rows: float32, float64, bfloat16.
const std::vector<nl::DType>& op_check_dtypes();

/// The result of one (op, dtype) row.
struct Result {
  std::string op, dtype;
  double nmse = 0, tol = 0;
  bool pass = false;
  std::string error;     ///< an exception's message (the row then fails)
  double device_ms = -1; ///< median device time of one call (with --time), else -1
};

/// Runs the cases whose name contains `filter` ("" = all) for each dtype on `dev` (a CUDA-slot device)
/// and on the CPU; with reps > 0 also times `reps` device calls (synchronised) after a warm-up.
std::vector<Result> run_op_checks(nl::Device dev, const std::vector<nl::DType>& dtypes, const std::string& filter,
                                  int reps);

}  // namespace nltest::opcheck
