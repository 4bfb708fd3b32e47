#include "backends/profiler.h"

#include <algorithm>
#include <mutex>

namespace nl::prof {
namespace {
std::atomic<bool> g_on{false};
std::atomic<int64_t> g_ns[(int)Cat::kCount];
std::atomic<double> g_flops{0};
std::atomic<int64_t> g_op_ns[(int)Op::kCount];
struct KernelAcc {
  std::string category;
  double seconds = 0;
  int64_t calls = 0;
};
std::mutex g_kernels_mu;
std::map<std::string, KernelAcc> g_kernels;  // by kernel name
void add_kernel(const char* fn, const char* category, double s) {
  std::lock_guard<std::mutex> lock(g_kernels_mu);
  KernelAcc& k = g_kernels[fn ? fn : "?"];
  k.category = category;
  k.seconds += s;
  ++k.calls;
}
}  // namespace

const char* cat_name(Cat c) {
  static const char* names[] = {"gemm", "conv im2col/col2im", "pooling", "norm", "optimizer",
                                "elementwise", "reductions", "softmax/loss", "gather/scatter", "random"};
  return names[(int)c];
}
void enable(bool on) { g_on.store(on, std::memory_order_relaxed); }
bool enabled() { return g_on.load(std::memory_order_relaxed); }
void reset() {
  for (auto& a : g_ns) a.store(0);
  for (auto& a : g_op_ns) a.store(0);
  g_flops.store(0);
  std::lock_guard<std::mutex> lock(g_kernels_mu);
  g_kernels.clear();
}
void add_gemm_flops(double f) {
  if (!enabled()) return;
  double cur = g_flops.load(std::memory_order_relaxed);
  while (!g_flops.compare_exchange_weak(cur, cur + f, std::memory_order_relaxed)) {
  }
}
double gemm_flops() { return g_flops.load(); }
void add(Cat c, double s) { g_ns[(int)c].fetch_add((int64_t)(s * 1e9), std::memory_order_relaxed); }
std::map<std::string, double> totals() {
  std::map<std::string, double> m;
  for (int i = 0; i < (int)Cat::kCount; ++i) m[cat_name((Cat)i)] = g_ns[i].load() * 1e-9;
  return m;
}
const char* op_name(Op o) {
  static const char* names[] = {"attention"};
  return names[(int)o];
}
void add(Op o, double s) { g_op_ns[(int)o].fetch_add((int64_t)(s * 1e9), std::memory_order_relaxed); }
void add(Cat c, double s, const char* fn) {
  add(c, s);
  add_kernel(fn, cat_name(c), s);
}
void add(Op o, double s, const char*) { add(o, s); }  // an op overlaps its kernels: not a kernel of its own
std::vector<KernelTime> kernel_totals() {
  std::vector<KernelTime> v;
  {
    std::lock_guard<std::mutex> lock(g_kernels_mu);
    for (const auto& [name, k] : g_kernels) v.push_back({name, k.category, k.seconds, k.calls});
  }
  std::sort(v.begin(), v.end(), [](const KernelTime& a, const KernelTime& b) { return a.seconds > b.seconds; });
  return v;
}
std::map<std::string, double> op_totals() {
  std::map<std::string, double> m;
  for (int i = 0; i < (int)Op::kCount; ++i) m[op_name((Op)i)] = g_op_ns[i].load() * 1e-9;
  return m;
}
}  // namespace nl::prof
