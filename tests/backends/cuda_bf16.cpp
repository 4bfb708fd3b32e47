// bfloat16 on the GPU against the CPU: casts give the same bits (every special class), bfloat16 products
// (cublasGemmStridedBatchedEx, CUDA_R_16BF, float32 accumulation) equal the exact product of the rounded
// operands within float32 accumulation error, with bias, ReLU and bfloat16 results; the TF32 switch.
#include <cmath>
#include <cstring>

#include "backends/cuda_test_util.h"
#include "backends/mixed_precision.h"

using namespace nl;
using nltest::kGpu;

namespace {
std::vector<uint16_t> bits_of(const Tensor& t) {
  const Tensor c = t.to(Device::cpu()).contiguous();
  std::vector<uint16_t> v((size_t)c.numel());
  std::memcpy(v.data(), c.data<bfloat16>(), v.size() * 2);
  return v;
}
// max |got - exact| / (K 2^-23 (|a||b|) + rel_round |exact|) - 1 over elements (<= 0: within the bound),
// exact = the float64 product of the bfloat16 operands, computed on the CPU.
double excess(const Tensor& got, const Tensor& a, const Tensor& b, double rel_round = 0.0) {
  const Tensor a64 = a.to(Device::cpu()).to(DType::Float64), b64 = b.to(Device::cpu()).to(DType::Float64);
  const auto exact = matmul(a64, b64).to_vector<double>(), scale = matmul(abs(a64), abs(b64)).to_vector<double>();
  const auto g = got.to_vector<double>();
  double worst = -1.0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double bound =
        (double)a.size(-1) * std::ldexp(1.0, -23) * scale[i] + rel_round * std::fabs(exact[i]) + 1e-30;
    worst = std::max(worst, std::fabs(g[i] - exact[i]) / bound - 1.0);
  }
  return worst;
}
}  // namespace

TEST_CASE("bfloat16 casts and fills give the CPU's bits", "[cuda][bf16]") {
  std::vector<uint32_t> u = {0x00000000, 0x80000000, 0x00000001, 0x00018000, 0x007fffff, 0x3f808000, 0x3f818000,
                             0x3f808001, 0x7f7fffff, 0x7f7f7fff, 0x7f800000, 0xff800000, 0x7f800001, 0xffa00000};
  for (int i = 0; i < 1000; ++i) u.push_back(0x9e3779b9u * (uint32_t)i);
  std::vector<float> f(u.size());
  std::memcpy(f.data(), u.data(), u.size() * 4);
  const Tensor x = Tensor::from_vector<float>(f, {(int64_t)f.size()});
  CHECK(bits_of(x.to(kGpu).to(DType::BFloat16)) == bits_of(x.to(DType::BFloat16)));
  const Tensor d = Tensor::randn({7, 9}, 0, 1e3, DType::Float64);
  CHECK(bits_of(d.to(kGpu).to(DType::BFloat16)) == bits_of(d.to(DType::BFloat16)));
  const Tensor b = x.to(DType::BFloat16);
  const Tensor back = b.to(kGpu).to(DType::Float32).to(Device::cpu());
  CHECK(std::memcmp(back.data<float>(), b.to(DType::Float32).data<float>(), f.size() * 4) == 0);
  Tensor m = Tensor::randn({6, 5}).to(DType::BFloat16);
  CHECK(bits_of(m.to(kGpu).transpose(0, 1).contiguous()) == bits_of(m.transpose(0, 1).contiguous()));
  Tensor z = Tensor::zeros({4, 4}, DType::BFloat16, kGpu);
  z.fill_(1.0 / 3.0);
  CHECK(bits_of(z) == std::vector<uint16_t>(16, 0x3eab));
}

TEST_CASE("bfloat16 products on the GPU are within float32 accumulation error of the exact ones", "[cuda][bf16]") {
  manual_seed(26);
  struct Case { Tensor a, b; };
  const Tensor w = Tensor::randn({384, 256}).to(DType::BFloat16);
  const std::vector<Case> cases = {
      {Tensor::randn({512, 128}).to(DType::BFloat16), Tensor::randn({128, 512}).to(DType::BFloat16)},
      {Tensor::randn({512, 1024}).to(DType::BFloat16), Tensor::randn({1024, 256}).to(DType::BFloat16)},
      {Tensor::randn({2048, 256}).to(DType::BFloat16).transpose(0, 1), Tensor::randn({2048, 128}).to(DType::BFloat16)},
      {Tensor::randn({512, 256}).to(DType::BFloat16), w.transpose(0, 1)},
      {Tensor::randn({8, 64, 32}).to(DType::BFloat16), Tensor::randn({8, 32, 64}).to(DType::BFloat16)},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    const Tensor a = cases[i].a, b = cases[i].b;
    const Tensor c = matmul(a.to(kGpu), b.to(kGpu));
    CHECK(c.dtype() == DType::Float32);
    CHECK(excess(c, a, b) <= 0.0);
    CHECK(excess(matmul(a.to(kGpu), b.to(kGpu), DType::BFloat16), a, b, std::ldexp(1.0, -8)) <= 0.0);
  }
  // Bias and ReLU in the epilogue: addmm, and a ReLU'd product through gemm_mixed.
  const Tensor a = Tensor::randn({64, 48}).to(DType::BFloat16), b = Tensor::randn({48, 40}).to(DType::BFloat16);
  const Tensor bias = Tensor::randn({40});
  nltest::check_close(addmm(bias.to(kGpu), a.to(kGpu), b.to(kGpu)), addmm(bias, a, b));
  Tensor cg = Tensor::zeros({64, 40}, DType::Float32, kGpu);
  const Tensor ag = a.to(kGpu), bg = b.to(kGpu), biasg = bias.to(kGpu);
  MixedGemm g;
  g.M = 64, g.N = 40, g.K = 48;
  g.A = {ag.desc().data, 48, 0, 0, false};
  g.B = {bg.desc().data, 40, 0, 0, false};
  g.C = cg.desc().data, g.ldc = 40;
  g.bias = static_cast<const float*>(biasg.desc().data);
  g.relu = true;
  backend_for(DeviceType::CUDA).gemm_mixed(g);
  nltest::check_close(cg, clamp_min(addmm(bias, a, b), 0.0));
}

TEST_CASE("TF32 is off by default for float32 products and the switch turns it on", "[cuda][bf16]") {
  REQUIRE_FALSE(allow_tf32());
  manual_seed(27);
  const Tensor a = Tensor::randn({256, 512}), b = Tensor::randn({512, 256});
  const Tensor cpu = matmul(a, b);
  nltest::check_close(matmul(a.to(kGpu), b.to(kGpu)), cpu);  // float32: NMSE <= 1e-6
  set_allow_tf32(true);
  const Tensor tf32 = matmul(a.to(kGpu), b.to(kGpu));
  set_allow_tf32(false);
  // TF32 keeps 10 mantissa bits of each input: relative errors near 2^-11 per term, far above float32's.
  const double e = nltest::nmse(tf32, cpu);
  CHECK(e <= 1e-4);
  CHECK(e > 1e-9);  // it did change the arithmetic (TF32 inputs are rounded)
}

TEST_CASE("sum_rows of a bfloat16 matrix on the GPU: float32 sums that match the CPU's", "[cuda][bf16]") {
  manual_seed(28);
  const Tensor m = Tensor::randn({1000, 37}).to(DType::BFloat16);
  const Tensor cpu = sum_rows(m), gpu = sum_rows(m.to(kGpu));
  REQUIRE(gpu.dtype() == DType::Float32);
  REQUIRE(gpu.shape() == Shape{37});
  nltest::check_close(gpu, cpu);  // both sum the widened values in double (float32 NMSE)
  Tensor out = Tensor::empty({37}, DType::Float32, kGpu);
  CHECK_THROWS_AS(backend_for(DeviceType::CUDA).reduce(ReduceOp::Max, out.desc(), m.to(kGpu).transpose(0, 1).desc(), 1),
                  std::invalid_argument);
}
