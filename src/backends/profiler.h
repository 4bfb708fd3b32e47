#pragma once
// Kernel-time profiler: when enabled, each backend kernel adds its wall time to a category
// (gemm, conv, pool, norm, optimizer, elementwise, loss, ...) and to its own name (kernel_totals()). Off by default; the check is one
// relaxed atomic load per kernel. Used by `normlab bench` for its time-share breakdown.
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <vector>

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

/// Ops timed as a whole beside the kernel categories (an op's kernels are also counted in their
/// categories, so op shares overlap the category shares): the fused attention op, forward and backward
/// (its per-head products, softmax rows and mask preparation).
enum class Op { Attention, kCount };

/// Op name as printed ("attention").
const char* op_name(Op o);
/// Adds `seconds` of wall time to op `o`.
void add(Op o, double seconds);
/// add(c, seconds), and one call of `seconds` to kernel `fn` (the name of the backend function that timed
/// it) in kernel_totals().
void add(Cat c, double seconds, const char* fn);
/// add(o, seconds); `fn` is not kept (an op's time overlaps its kernels').
void add(Op o, double seconds, const char* fn);

/// Time of one kernel (backend function) since the last reset(): its category, seconds and calls.
struct KernelTime {
  std::string name, category;
  double seconds = 0;
  int64_t calls = 0;
};
/// Every kernel timed since the last reset(), largest total first.
std::vector<KernelTime> kernel_totals();
/// Accumulated seconds per op name; zeroed by reset().
std::map<std::string, double> op_totals();

/// RAII timer: adds the scope's wall time to `key` (a Cat or an Op) when profiling is enabled.
template <class Key>
class BasicScope {
 public:
  /// `fn` defaults to the calling function's name (the kernel), for kernel_totals().
  explicit BasicScope(Key key, const char* fn = __builtin_FUNCTION()) : key_(key), fn_(fn), on_(enabled()) {
    if (on_) t0_ = std::chrono::steady_clock::now();
  }
  ~BasicScope() {
    if (on_) add(key_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(), fn_);
  }

 private:
  Key key_;
  const char* fn_;
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};
/// Times a kernel into its category.
using Scope = BasicScope<Cat>;
/// Times a whole op.
using OpScope = BasicScope<Op>;

}  // namespace nl::prof
