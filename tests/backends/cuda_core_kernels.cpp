// CUDA core kernels against the CPU backend on random inputs: elementwise (contiguous, transposed and
// broadcast operands), casts, where, reductions, matmul (plain, transposed, batched), gathers and their
// scatters, and the counter-based random fill (bitwise equal). NMSE <= 1e-10 (float64) / 1e-6
// (float32); int64 results exact.
#include "backends/cpu/cpu_backend.h"
#include "backends/cuda_test_util.h"
#include "backends/random_rounding_check.h"
#include "backends/scatter_order_check.h"

using namespace nl;
using nltest::check_close;
using nltest::kGpu;

TEST_CASE("unary ops match the CPU", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = abs(Tensor::randn({37, 19}, 0, 1, dt)) + 0.1;  // positive: log, sqrt, pow are defined
    for (int op = 0; op <= (int)UnaryOp::GtScalar; ++op) {
      INFO("op " << op << " " << dtype_name(dt));
      const UnaryOp u = (UnaryOp)op;
      check_close(unary(u, x.to(kGpu), 0.7, -0.2), unary(u, x, 0.7, -0.2));
    }
  }
}

TEST_CASE("binary ops on transposed and broadcast operands match the CPU", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor a = (Tensor::randn({5, 6, 4}, 0, 3, DType::Float64) + 0.5).to(dt).transpose(0, 2);  // [4, 6, 5] strided
    // broadcast over dims 0, 2; in [1, 9), so that no int64 divisor is 0 whatever the generator's state
    Tensor b = Tensor::rand({6, 1}, 1.0, 9.0, DType::Float64).to(dt);
    for (int op = 0; op <= (int)BinaryOp::ReluGrad; ++op) {
      if (dt == DType::Int64 && (BinaryOp)op == BinaryOp::Pow) continue;
      INFO("op " << op << " " << dtype_name(dt));
      Tensor out_cpu = Tensor::empty({4, 6, 5}, dt), out_gpu = Tensor::empty({4, 6, 5}, dt, kGpu);
      binary_into((BinaryOp)op, out_cpu, a, b);
      binary_into((BinaryOp)op, out_gpu, a.to(kGpu).transpose(0, 2).contiguous().transpose(0, 2), b.to(kGpu));
      check_close(out_gpu, out_cpu);
    }
  }
}

TEST_CASE("copy with cast and fill and where and strided writes match the CPU", "[cuda]") {
  Tensor x = Tensor::randn({8, 9}, 0, 5, DType::Float64);
  const Tensor xg = x.to(kGpu);
  check_close(xg.to(DType::Int64), x.to(DType::Int64));
  check_close(xg.to(DType::Float32), x.to(DType::Float32));
  check_close(xg.transpose(0, 1).contiguous(), x.transpose(0, 1).contiguous());
  Tensor c = x.clone(), cg = xg.clone();
  c.slice(1, 1, 9, 3).fill_(-2.5);
  cg.slice(1, 1, 9, 3).fill_(-2.5);
  check_close(cg, c);
  Tensor cond = gt(Tensor::randn({1, 9}, 0, 1, DType::Float64), 0.0).expand({8, 9});
  Tensor y = Tensor::randn({8, 9}, 0, 1, DType::Float64);
  check_close(where(cond.to(kGpu), xg, y.to(kGpu)), where(cond, x, y));
}

TEST_CASE("reductions over contiguous and transposed views match the CPU", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor x = (Tensor::randn({6, 300, 5}, 0, 10, DType::Float64)).to(dt);
    const Tensor xg = x.to(kGpu);
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{1}, {2}, {1, 2}, {0}}) {
      INFO(dtype_name(dt) << " over " << dims.size() << " dims starting at " << dims[0]);
      check_close(sum(xg, dims), sum(x, dims));
      if (dt != DType::Int64) check_close(mean(xg, dims), mean(x, dims));
    }
    check_close(max(xg, 1), max(x, 1));
    check_close(min(xg.transpose(0, 1), 0), min(x.transpose(0, 1), 0));
    check_close(argmax(xg, 1), argmax(x, 1));  // int64: exact, first maximum on ties
    check_close(argmax(xg.transpose(1, 2), 2), argmax(x.transpose(1, 2), 2));
  }
}

TEST_CASE("matmul (cuBLAS strided-batched) matches the CPU", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor a = Tensor::randn({33, 17}, 0, 1, dt), b = Tensor::randn({17, 29}, 0, 1, dt);
    check_close(matmul(a.to(kGpu), b.to(kGpu)), matmul(a, b));
    Tensor at = Tensor::randn({17, 33}, 0, 1, dt), bt = Tensor::randn({29, 17}, 0, 1, dt);
    check_close(matmul(at.to(kGpu).transpose(0, 1), bt.to(kGpu).transpose(0, 1)),
                matmul(at.transpose(0, 1), bt.transpose(0, 1)));
    Tensor p = Tensor::randn({2, 3, 7, 5}, 0, 1, dt), q = Tensor::randn({3, 5, 4}, 0, 1, dt);  // broadcast batch
    check_close(matmul(p.to(kGpu), q.to(kGpu)), matmul(p, q));
  }
}

TEST_CASE("embedding and index_select and gather match the CPU exactly", "[cuda]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor table = Tensor::randn({11, 6}, 0, 9, DType::Float64).to(dt);
    Tensor ids = Tensor::randint(0, 11, {4, 7});
    CHECK(nltest::nmse(embedding(table.to(kGpu), ids.to(kGpu)), embedding(table, ids)) == 0.0);
    Tensor idx = Tensor::randint(0, 6, {11, 3});
    CHECK(nltest::nmse(gather(table.to(kGpu), 1, idx.to(kGpu)), gather(table, 1, idx)) == 0.0);
    CHECK(nltest::nmse(index_select(table.to(kGpu), 0, ids.view({-1}).to(kGpu)), index_select(table, 0, ids.view({-1}))) == 0.0);
  }
}

TEST_CASE("uniform random fills are bitwise equal to the CPU's for one seed", "[cuda]") {
  // (0.1, 0.7): a fused multiply-add changes ~27% of these values; (-1, 3) could not tell (random_rounding_check.h).
  CHECK(nltest::uniform_rounding_mismatches(backend_for(DeviceType::CUDA), kGpu, 70000, 42, 3) == 0);
  for (DType dt : {DType::Float32, DType::Float64}) {
    manual_seed(123);
    Tensor c = Tensor::rand({1000}, nltest::kRandLo, nltest::kRandHi, dt);
    manual_seed(123);
    Tensor g = Tensor::rand({1000}, nltest::kRandLo, nltest::kRandHi, dt, kGpu);
    CHECK(g.to_vector<double>() == c.to_vector<double>());
    manual_seed(5);
    Tensor cn = Tensor::randn({1000}, 0, 1, dt);
    manual_seed(5);
    check_close(Tensor::randn({1000}, 0, 1, dt, kGpu), cn);  // device log/cos may differ in the last bit
  }
}

TEST_CASE("scatters add in index order: equal to the CPU bit for bit and repeatable", "[cuda]") {
  CHECK(nltest::scatter_order_mismatches<float>(kGpu, DType::Float32, 11) == 0);
  CHECK(nltest::scatter_order_mismatches<double>(kGpu, DType::Float64, 12) == 0);
  // A larger embedding backward (many repeats per row, as frequent tokens): five runs, one result.
  Tensor table = Tensor::zeros({50, 256}, DType::Float32, kGpu);
  Tensor ids = Tensor::randint(0, 50, {8192}).to(kGpu);
  Tensor src = Tensor::randn({8192, 256}, 0, 1, DType::Float32, kGpu);
  std::vector<float> first;
  for (int run = 0; run < 5; ++run) {
    Tensor t = table.clone();
    backend_for(DeviceType::CUDA).index_add_rows(t.desc(), ids.desc(), src.desc());
    if (run == 0) first = t.to_vector<float>();
    else CHECK(t.to_vector<float>() == first);
  }
  Tensor cpu_t = Tensor::zeros({50, 256});
  cpu_backend().index_add_rows(cpu_t.desc(), ids.to(Device::cpu()).desc(), src.to(Device::cpu()).desc());
  CHECK(cpu_t.to_vector<float>() == first);
}
