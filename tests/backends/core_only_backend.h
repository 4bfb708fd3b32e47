#pragma once
// CoreOnlyBackend: a test backend with the core kernels only (it forwards them to the CPU backend's core
// kernels and installs no fused kernels), so every fused op it runs goes through CompositeKernels.
// FakeDevice registers it as the CUDA slot for a scope, which lets whole autograd ops run "on cuda:0"
// through the registry (the memory is host memory).
#include "backends/backend.h"
#include "backends/cpu/cpu_backend.h"

namespace nltest {

/// Core kernels of the CPU backend, no fused kernels (fused() is the composite fallback). Tests may derive
/// from it to replace one kernel (test_scatter_order.cpp).
class CoreOnlyBackend : public nl::Backend {
 public:
  nl::DeviceType type() const override { return nl::DeviceType::CUDA; }
  std::string name() const override { return "core-only test backend"; }
  void* allocate(size_t n, int d) override { return c().allocate(n, d); }
  void deallocate(void* p, size_t n, int d) override { c().deallocate(p, n, d); }
  void copy_to_host(void* dst, const void* src, size_t n, int d) override {
    ++to_host;
    c().copy_to_host(dst, src, n, d);
  }
  void copy_from_host(void* dst, const void* src, size_t n, int d) override {
    ++from_host;
    c().copy_from_host(dst, src, n, d);
  }

  /// Copies device -> host and host -> device so far (what a GPU would wait for or upload).
  int64_t to_host = 0, from_host = 0;
  void fill(const nl::Desc& o, double v) override { c().fill(o, v); }
  void copy(const nl::Desc& o, const nl::Desc& i) override { c().copy(o, i); }
  void unary(nl::UnaryOp op, const nl::Desc& o, const nl::Desc& i, double a, double b) override {
    c().unary(op, o, i, a, b);
  }
  void binary(nl::BinaryOp op, const nl::Desc& o, const nl::Desc& x, const nl::Desc& y) override {
    c().binary(op, o, x, y);
  }
  void where(const nl::Desc& o, const nl::Desc& k, const nl::Desc& x, const nl::Desc& y) override {
    c().where(o, k, x, y);
  }
  void random(const nl::Desc& o, bool normal, double lo, double hi, uint64_t seed, uint64_t off) override {
    c().random(o, normal, lo, hi, seed, off);
  }
  void reduce(nl::ReduceOp op, const nl::Desc& o, const nl::Desc& i, int nr) override { c().reduce(op, o, i, nr); }
  void index_select_rows(const nl::Desc& o, const nl::Desc& t, const nl::Desc& i) override {
    c().index_select_rows(o, t, i);
  }
  void index_add_rows(const nl::Desc& t, const nl::Desc& i, const nl::Desc& s) override { c().index_add_rows(t, i, s); }
  void gather_rows(const nl::Desc& o, const nl::Desc& i, const nl::Desc& x) override { c().gather_rows(o, i, x); }
  void scatter_add_rows(const nl::Desc& g, const nl::Desc& i, const nl::Desc& s) override {
    c().scatter_add_rows(g, i, s);
  }
  void gemm_mixed(const nl::MixedGemm& g) override { c().gemm_mixed(g); }
  void gemm(nl::DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A, int64_t lda,
            int64_t sA, const void* B, int64_t ldb, int64_t sB, double beta, void* C, int64_t ldc, int64_t sC,
            int64_t batch, int dev) override {
    c().gemm(t, ta, tb, M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, batch, dev);
  }

 private:
  static nl::Backend& c() { return nl::cpu_backend(); }
};

/// Registers a CoreOnlyBackend as the CUDA backend until destroyed (then restores the built-in one).
struct FakeDevice {
  CoreOnlyBackend backend;
  FakeDevice() { nl::register_backend(nl::DeviceType::CUDA, &backend); }
  ~FakeDevice() { nl::register_backend(nl::DeviceType::CUDA, nullptr); }
};

}  // namespace nltest
