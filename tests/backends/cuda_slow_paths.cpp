// The CUDA slow paths of issue 27, fixed with the standard designs, against the CPU: reductions over
// leading dims read in place (tiled column reduction) and long rows split over many blocks (two-stage),
// both repeatable bit for bit; LayerNorm weight/bias gradients over many rows (tiled two-pass); gemm_grid
// as one cuBLAS call for each plan (strided or pointer array); and the caching allocator's block splitting
// under variable batch shapes. Timings: scripts/gpu-check.sh (normlab_op_check --time).
#include "autograd/functions.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cuda_test_util.h"
#ifdef NORMLAB_WITH_CUDA
#include "backends/cuda/cuda_entry.h"
#endif

using namespace nl;
using nltest::check_close;
using nltest::kGpu;

TEST_CASE("sums over leading and middle dims and full reductions match the CPU and repeat", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    INFO(dtype_name(dt));
    Tensor g = Tensor::randn({3000, 257}, 0, 1, dt);  // bias-gradient shape: sum over rows
    check_close(sum(g.to(kGpu), {0}), sum(g, {0}));
    check_close(mean(g.to(kGpu), {0}), mean(g, {0}));
    Tensor bn = Tensor::randn({16, 24, 33, 31}, 0, 1, dt);  // BatchNorm statistics: keep dim 1
    check_close(sum(bn.to(kGpu), {0, 2, 3}), sum(bn, {0, 2, 3}));
    Tensor big = Tensor::randn({1 << 21}, 0, 1, dt);  // one output, 2M elements: the two-stage path
    check_close(sum(big.to(kGpu)), sum(big));
    const Tensor bg = big.to(kGpu);
    CHECK(sum(bg).item() == sum(bg).item());
    CHECK(sum(g.to(kGpu), {0}).to_vector<double>() == sum(g.to(kGpu), {0}).to_vector<double>());
    Tensor rows = Tensor::randn({3, 300000}, 0, 1, dt);  // few long rows: split, max/argmax combine chunks
    check_close(max(rows.to(kGpu), 1), max(rows, 1));
    check_close(argmax(rows.to(kGpu), 1), argmax(rows, 1));
  }
}

TEST_CASE("LayerNorm weight and bias gradients over many rows match the CPU", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = Tensor::randn({4099, 512}, 1, 2, dt), w = Tensor::randn({512}, 1, 0.5, dt), b = Tensor::randn({512}, 0, 1, dt);
    auto grads = [&](Device d) {
      Variable xv(x.to(d), true), wv(w.to(d), true), bv(b.to(d), true);
      Variable y = layer_norm_fused(xv, NormKernelOpts{}, wv, bv);
      sum(y * y).backward();
      return std::vector<Tensor>{wv.grad(), bv.grad()};
    };
    const auto c = grads(Device::cpu()), gpu = grads(kGpu);
    check_close(gpu[0], c[0]);
    check_close(gpu[1], c[1]);
  }
}

TEST_CASE("gemm_grid runs every plan (batch, outer, flat, pointer array) as the CPU does", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    const int64_t O = 3, Bt = 4, M = 5, N = 6, K = 7;
    struct Case { int64_t sA, oA, sB, oB, sC, oC, batch, outer; };
    // heads-last attention (pointer array), contiguous (flat), batch 1 (outer), outer 1 (batch)
    const Case cases[] = {{K, Bt * M * K + 3 * K, K * N, 0, M * N, Bt * M * N, Bt, O},
                          {M * K, Bt * M * K, K * N, Bt * K * N, M * N, Bt * M * N, Bt, O},
                          {0, M * K, 0, K * N, 0, M * N, 1, O},
                          {M * K, 0, K * N, 0, M * N, 0, Bt, 1}};
    for (const Case& k : cases) {
      const int64_t na = O * (Bt * M * K + 3 * K) + M * K * Bt, nb = O * Bt * K * N + K * N * Bt, nc = O * Bt * M * N;
      Tensor a = Tensor::randn({na}, 0, 1, dt), b = Tensor::randn({nb}, 0, 1, dt), c = Tensor::randn({nc}, 0, 1, dt);
      Tensor ag = a.to(kGpu), bgp = b.to(kGpu), cg = c.to(kGpu);
      for (Backend* be : {&backend_for(DeviceType::CPU), &backend_for(DeviceType::CUDA)}) {
        const bool gpu = be->type() == DeviceType::CUDA;
        be->gemm_grid(dt, false, false, M, N, K, 1.0, (gpu ? ag : a).desc().data, K, k.sA, k.oA,
                      (gpu ? bgp : b).desc().data, N, k.sB, k.oB, 0.5, (gpu ? cg : c).desc().data, N, k.sC, k.oC,
                      k.batch, k.outer, 0);
      }
      check_close(cg, c);
    }
  }
}

#ifdef NORMLAB_WITH_CUDA
TEST_CASE("the caching allocator splits blocks: variable batch shapes stop calling cudaMalloc", "[cuda]") {
  Variable w(Tensor::randn({64, 64}, 0, 0.1, DType::Float32, kGpu), true);
  auto step = [&](int64_t T) {
    w.zero_grad();
    Tensor x = Tensor::randn({T * 8, 64}, 0, 1, DType::Float32, kGpu);
    Variable y = layer_norm_fused(tanh(matmul(Variable(x), w)), NormKernelOpts{});
    sum(y * y).backward();
    backend_for(DeviceType::CUDA).synchronize(0);
  };
  const int64_t lengths[] = {37, 250, 91, 512, 13, 300, 128, 499, 64, 203};
  for (int64_t T : lengths) step(T);
  const uint64_t warm = cuda::allocator_stats(0).malloc_calls;
  for (int rep = 0; rep < 3; ++rep)
    for (int64_t T : lengths) step(T + rep);
  CHECK(cuda::allocator_stats(0).malloc_calls == warm);
  CHECK(cuda::allocator_stats(0).splits > 0);
}
#endif
