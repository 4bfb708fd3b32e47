#pragma once
// Kernel-time profiler: when enabled, each backend kernel adds its wall time to a category
// (gemm, conv, pool, norm, optimizer, elementwise, loss, ...). Off by default; the check is one
// relaxed atomic load per kernel. Used by `normlab bench` for its time-share breakdown.
#include <atomic>
#include <chrono>
#include <map>
#include <string>

namespace nl::prof {

enum class Cat { Gemm, Conv, Pool, Norm, Optimizer, Elementwise, Reduce, Loss, Index, Random, kCount };

/// Category name as printed ("gemm", "conv im2col/col2im", ...).
const char* cat_name(Cat c);
/// Turns kernel timing on or off (process-wide).
void enable(bool on);
/// True while kernel timing is on.
bool enabled();
/// Zeroes all accumulated times.
void reset();
/// Accumulated seconds per category name.
std::map<std::string, double> totals();
/// Adds `seconds` of wall time to category `c`.
void add(Cat c, double seconds);
/// Adds `flops` floating-point operations executed by matrix products (2·M·N·K per product), counted
/// only while profiling is enabled; zeroed by reset().
void add_gemm_flops(double flops);
/// Matrix-product FLOPs counted since the last reset().
double gemm_flops();

/// RAII timer: adds the scope's wall time to `c` when profiling is enabled.
class Scope {
 public:
  explicit Scope(Cat c) : c_(c), on_(enabled()) {
    if (on_) t0_ = std::chrono::steady_clock::now();
  }
  ~Scope() {
    if (on_) add(c_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
  }

 private:
  Cat c_;
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace nl::prof
