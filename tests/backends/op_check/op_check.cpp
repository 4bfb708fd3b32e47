// The op table of the op-by-op check (op_check.h) and its runner. Inputs are drawn from a std::mt19937
// per (op, dtype) on the host, so the CPU and the device see the same values and the global generator is
// untouched. Bounds: default NMSE 1e-10 (float32) / 1e-24 (float64) -- a few ulps of difference from
// another summation order or libm; bit-exact (kExact) where the contract says the bits are equal (copies,
// gathers, ordered scatters, random uniform fills, dropout masks, max / argmax, pooling indices).
#include "backends/op_check/op_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "backends/cpu/cpu_backend.h"
#include "backends/mixed_precision.h"
#include "tensor/ops.h"
#include "norm_variants.h"

namespace nltest::opcheck {
namespace {
using nl::Backend;
using nl::Desc;
using nl::Device;
using nl::DType;
using nl::Tensor;
using Ins = std::vector<Tensor>;

Tensor randn(const nl::Shape& s, DType dt, std::mt19937& rng, double mean = 0, double sd = 1) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::normal_distribution<double> g(mean, sd);
  std::vector<double> v((size_t)n);
  for (auto& x : v) x = g(rng);
  return Tensor::from_vector<double>(v, s).to(dt);
}
Tensor randint(int64_t lo, int64_t hi, const nl::Shape& s, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::uniform_int_distribution<int64_t> g(lo, hi - 1);
  std::vector<int64_t> v((size_t)n);
  for (auto& x : v) x = g(rng);
  return Tensor::from_vector<int64_t>(v, s);
}
Tensor out(const nl::Shape& s, DType dt, Device d) { return Tensor::full(s, 123.0, dt, d); }  // poisoned
DType other(DType t) { return t == DType::Float64 ? DType::Float32 : DType::Float64; }

std::vector<OpCase> build() {
  std::vector<OpCase> c;
  auto add = [&](std::string name, Tol tol, decltype(OpCase::inputs) in, decltype(OpCase::run) run) {
    c.push_back({std::move(name), tol, std::move(in), std::move(run)});
  };
  // ---- core: memory and elementwise ----
  add("fill", kExact, [](DType, std::mt19937&) { return Ins{}; }, [](Backend& be, Device d, DType t, const Ins&) {
    Tensor o = out({37, 19}, t, d);
    be.fill(o.desc(), 0.37);
    return Ins{o};
  });
  add("copy.cast", kExactAll, [](DType t, std::mt19937& r) { return Ins{randn({31, 17}, t, r)}; },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor o = out({31, 17}, other(t), d);
        be.copy(o.desc(), in[0].desc());
        return Ins{o};
      });
  add("copy.to_bf16", bf16_only(0.0),  // float32 -> bfloat16, round to nearest even (the vector paths)
      [](DType, std::mt19937& r) { return Ins{randn({67, 33}, DType::Float32, r)}; },
      [](Backend& be, Device d, DType, const Ins& in) {
        Tensor o = out({67, 33}, DType::BFloat16, d);
        be.copy(o.desc(), in[0].desc());
        return Ins{o};
      });
  add("copy.transposed", kExactAll, [](DType t, std::mt19937& r) { return Ins{randn({13, 29}, t, r)}; },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor o = out({29, 13}, t, d);
        be.copy(o.desc(), in[0].transpose(0, 1).desc());
        return Ins{o};
      });
  for (int op = 0; op <= (int)nl::UnaryOp::GtScalar; ++op)
    add("unary." + std::to_string(op), Tol{},
        [](DType t, std::mt19937& r) { return Ins{abs(randn({37, 19}, t, r)) + 0.1}; },  // log, sqrt, pow defined
        [op](Backend& be, Device d, DType t, const Ins& in) {
          Tensor o = out({19, 37}, t, d);
          be.unary((nl::UnaryOp)op, o.desc(), in[0].transpose(0, 1).desc(), 0.7, -0.2);
          return Ins{o};
        });
  for (int op = 0; op <= (int)nl::BinaryOp::ReluGrad; ++op)
    add("binary." + std::to_string(op), Tol{},
        [](DType t, std::mt19937& r) { return Ins{randn({5, 6, 4}, t, r, 0.5, 3), randn({6, 1}, t, r, 4, 3)}; },
        [op](Backend& be, Device d, DType t, const Ins& in) {
          Tensor o = out({4, 6, 5}, t, d);  // a strided (transposed) and a broadcast operand
          be.binary((nl::BinaryOp)op, o.desc(), in[0].transpose(0, 2).desc(),
                    in[1].unsqueeze(0).expand({4, 6, 5}).desc());
          return Ins{o};
        });
  add("where", kExact,
      [](DType t, std::mt19937& r) { return Ins{gt(randn({9, 8}, t, r), 0.0), randn({9, 8}, t, r), randn({8}, t, r)}; },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor o = out({9, 8}, t, d);
        be.where(o.desc(), in[0].desc(), in[1].desc(), in[2].unsqueeze(0).expand({9, 8}).desc());
        return Ins{o};
      });
  add("random.uniform", kExact, [](DType, std::mt19937&) { return Ins{}; }, [](Backend& be, Device d, DType t, const Ins&) {
    Tensor o = out({70001}, t, d);
    be.random(o.desc(), false, 0.1, 0.7, 42, 5);
    return Ins{o};
  });
  add("random.normal", Tol{}, [](DType, std::mt19937&) { return Ins{}; }, [](Backend& be, Device d, DType t, const Ins&) {
    Tensor o = out({70001}, t, d);
    be.random(o.desc(), true, 0.1, 0.7, 42, 5);
    return Ins{o};
  });
  // ---- core: reductions (trailing dims, leading dims read in place, middle dims, one long row) ----
  const char* rname[] = {"sum", "mean", "max", "min", "argmax"};
  for (int op = 0; op <= (int)nl::ReduceOp::ArgMax; ++op) {
    const Tol tol = op >= 2 ? kExact : Tol{};
    const auto rop = (nl::ReduceOp)op;
    auto reduce_case = [&](const std::string& layout, nl::Shape shape, std::vector<int64_t> perm, int nreduce,
                           nl::Shape oshape) {
      add(std::string("reduce.") + rname[op] + "." + layout, tol,
          [shape](DType t, std::mt19937& r) { return Ins{randn(shape, t, r, 0, 10)}; },
          [=](Backend& be, Device d, DType t, const Ins& in) {
            Tensor o = out(oshape, rop == nl::ReduceOp::ArgMax ? DType::Int64 : t, d);
            be.reduce(rop, o.desc(), in[0].permute(perm).desc(), nreduce);
            return Ins{o};
          });
    };
    reduce_case("trailing", {6, 300, 5}, {0, 1, 2}, 2, {6});
    reduce_case("leading", {3000, 257}, {1, 0}, 1, {257});        // bias gradient: sum over rows
    reduce_case("middle", {16, 24, 33, 31}, {1, 0, 2, 3}, 3, {24});  // BatchNorm statistics
    reduce_case("full", {1 << 20}, {0}, 1, {});
    reduce_case("longrows", {3, 300000}, {0, 1}, 1, {3});
  }
  // ---- core: gathers and scatters ----
  using RowOp = void (Backend::*)(const Desc&, const Desc&, const Desc&);
  struct RowCase {  // a gather (out, table, idx) or a scatter (table += src at idx) of one row kernel
    const char* name;
    RowOp op;
    bool scatter;
    int64_t bound;
    nl::Shape idx, out;
  };
  for (const RowCase& rc : {RowCase{"index_select_rows", &Backend::index_select_rows, false, 11, {4, 7}, {28, 6}},
                            RowCase{"gather_rows", &Backend::gather_rows, false, 6, {11, 3}, {11, 3}},
                            RowCase{"index_add_rows", &Backend::index_add_rows, true, 11, {2000}, {2000, 6}},
                            RowCase{"scatter_add_rows", &Backend::scatter_add_rows, true, 6, {11, 40}, {11, 40}}})
    add(rc.name, kExact,
        [rc](DType t, std::mt19937& r) { return Ins{randn({11, 6}, t, r), randint(0, rc.bound, rc.idx, r), randn(rc.out, t, r, 0, 100)}; },
        [rc](Backend& be, Device d, DType t, const Ins& in) {
          if (rc.scatter) {  // in[2] holds the contributions
            Tensor tab = in[0].clone();
            (be.*rc.op)(tab.desc(), in[1].desc(), in[2].desc());
            return Ins{tab};
          }
          Tensor o = out(rc.out, t, d);
          (be.*rc.op)(o.desc(), in[0].desc(), in[1].desc());
          return Ins{o};
        });
  // ---- core: matrix products ----
  for (int v = 0; v < 4; ++v) {
    const bool ta = v == 1, tb = v == 2;
    const int64_t M = 33, N = 29, K = 17, batch = v == 3 ? 5 : 1;
    add(std::string("gemm.") + (v == 0 ? "nn" : v == 1 ? "tn" : v == 2 ? "nt" : "batched"), Tol{},
        [=](DType t, std::mt19937& r) { return Ins{randn({batch, M * K}, t, r), randn({batch, K * N}, t, r), randn({batch, M * N}, t, r)}; },
        [=](Backend& be, Device d, DType t, const Ins& in) {
          Tensor o = in[2].clone();
          be.gemm(t, ta, tb, M, N, K, 1.0, in[0].desc().data, ta ? M : K, M * K, in[1].desc().data, tb ? K : N, K * N,
                  0.5, o.desc().data, N, M * N, batch, d.index);
          return Ins{o};
        });
  }
  add("gemm_grid.heads_last", Tol{},  // attention's per-sequence x per-head products: the pointer-array plan
      [](DType t, std::mt19937& r) { return Ins{randn({3, 7, 4, 9}, t, r), randn({3, 6, 4, 9}, t, r), randn({3, 4, 7, 6}, t, r)}; },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor o = in[2].clone();  // scores[s, h] = Q[s, :, h] K[s, :, h]^T, Q [S, Tq, H, dh], K [S, Tk, H, dh]
        be.gemm_grid(t, false, true, 7, 6, 9, 0.5, in[0].desc().data, 4 * 9, 9, 7 * 4 * 9, in[1].desc().data, 4 * 9, 9,
                     6 * 4 * 9, 0.25, o.desc().data, 6, 7 * 6, 4 * 7 * 6, 4, 3, d.index);
        return Ins{o};
      });
  // ---- core: mixed-precision products (bfloat16 operands, float32 accumulation; Backend::gemm_mixed) ----
  struct MixedCase {
    const char* name;
    bool ta, tb, bias, relu, c_bf16;
    double beta;
  };
  for (const MixedCase& mc : {MixedCase{"gemm_mixed.nn_bias_relu", false, false, true, true, false, 0.0},
                              MixedCase{"gemm_mixed.tn_beta", true, false, false, false, false, 1.0},
                              MixedCase{"gemm_mixed.nt_bf16_out", false, true, true, false, true, 0.0}}) {
    const int64_t M = 33, N = 29, K = 47;
    // a bfloat16 result may round the other way where the two float32 sums straddle a tie
    add(mc.name, bf16_only(mc.c_bf16 ? 1e-5 : 1e-10),
        [=](DType, std::mt19937& r) {
          return Ins{randn({M * K}, DType::BFloat16, r), randn({K * N}, DType::BFloat16, r),
                     randn({M * N}, mc.c_bf16 ? DType::BFloat16 : DType::Float32, r), randn({N}, DType::Float32, r)};
        },
        [=](Backend& be, Device d, DType, const Ins& in) {
          Tensor o = in[2].clone();
          nl::MixedGemm g;
          g.c = o.dtype();
          g.M = M, g.N = N, g.K = K, g.beta = mc.beta, g.alpha = 0.5;
          g.A = {in[0].desc().data, mc.ta ? M : K, 0, 0, mc.ta};
          g.B = {in[1].desc().data, mc.tb ? K : N, 0, 0, mc.tb};
          g.C = o.desc().data, g.ldc = N;
          g.bias = mc.bias ? static_cast<const float*>(in[3].desc().data) : nullptr;
          g.relu = mc.relu;
          g.device_index = d.index;
          be.gemm_mixed(g);
          return Ins{o};
        });
  }
  add("gemm_mixed.heads_grid", bf16_only(1e-10),  // attention's per-sequence x per-head products under autocast
      [](DType, std::mt19937& r) {
        return Ins{randn({3, 7, 4, 9}, DType::BFloat16, r), randn({3, 6, 4, 9}, DType::BFloat16, r),
                   randn({3, 4, 7, 6}, DType::Float32, r)};
      },
      [](Backend& be, Device d, DType, const Ins& in) {
        Tensor o = in[2].clone();  // scores[s, h] = Q[s, :, h] K[s, :, h]^T, Q [S, Tq, H, dh], K [S, Tk, H, dh]
        nl::MixedGemm g;
        g.M = 7, g.N = 6, g.K = 9, g.batch = 4, g.outer = 3;
        g.A = {in[0].desc().data, 4 * 9, 9, 7 * 4 * 9, false};
        g.B = {in[1].desc().data, 4 * 9, 9, 6 * 4 * 9, true};
        g.C = o.desc().data, g.ldc = 6, g.strideC = 7 * 6, g.outerC = 4 * 7 * 6;
        g.device_index = d.index;
        be.gemm_mixed(g);
        return Ins{o};
      });
  // ---- fused: softmax, dropout, FFN activation ----
  for (bool log : {false, true}) {
    const std::string n = log ? "log_softmax" : "softmax";
    add(n, Tol{}, [](DType t, std::mt19937& r) { return Ins{randn({37, 301}, t, r, 0, 3)}; },
        [log](Backend& be, Device d, DType t, const Ins& in) {
          Tensor o = out({37, 301}, t, d);
          be.fused().softmax(o.desc(), in[0].desc(), log);
          return Ins{o};
        });
    add(n + ".backward", Tol{},
        [log](DType t, std::mt19937& r) {
          Tensor y = randn({37, 301}, t, r, 0, 3);
          Tensor sm = Tensor::empty({37, 301}, t);
          nl::cpu_backend().fused().softmax(sm.desc(), y.desc(), log);
          return Ins{randn({37, 301}, t, r), sm};
        },
        [log](Backend& be, Device d, DType t, const Ins& in) {
          Tensor o = out({37, 301}, t, d);
          be.fused().softmax_backward(o.desc(), in[0].desc(), in[1].desc(), log);
          return Ins{o};
        });
  }
  add("dropout", kExact, [](DType t, std::mt19937& r) { return Ins{randn({64, 129}, t, r)}; },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor o = out({64, 129}, t, d);
        be.fused().dropout(o.desc(), in[0].desc(), 0.3, 7, 11);
        return Ins{o};
      });
  add("dropout_add", kExact, [](DType t, std::mt19937& r) { return Ins{randn({64, 129}, t, r), randn({64, 129}, t, r)}; },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor o = out({64, 129}, t, d);
        be.fused().dropout_add(o.desc(), in[0].desc(), in[1].desc(), 0.3, 7, 11);
        return Ins{o};
      });
  add("bias_relu_dropout", kExact, [](DType t, std::mt19937& r) { return Ins{randn({64, 129}, t, r), randn({129}, t, r)}; },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor o = out({64, 129}, t, d);
        be.fused().bias_relu_dropout(o.desc(), in[0].desc(), in[1].desc(), 0.3, 7, 11);
        return Ins{o};
      });
  add("bias_relu_dropout.backward", Tol{},
      [](DType t, std::mt19937& r) { return Ins{relu(randn({64, 129}, t, r)), randn({64, 129}, t, r)}; },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor gx = out({64, 129}, t, d), gb = out({129}, t, d);
        be.fused().bias_relu_dropout_backward(gx.desc(), gb.desc(), in[1].desc(), in[0].desc(), 0.3);
        return Ins{gx, gb};
      });
  // ---- fused: convolution helpers and pooling (NCHW [2, 3, 9, 8], 3x2 window, stride 2x1, padding 1x0) ----
  const nl::Conv2dGeom geom{2, 3, 9, 8, 3, 2, 2, 1, 1, 0};
  const int64_t ohw = geom.OH() * geom.OW();
  add("im2col", kExact, [](DType t, std::mt19937& r) { return Ins{randn({2, 3, 9, 8}, t, r)}; },
      [=](Backend& be, Device d, DType t, const Ins& in) {
        Tensor o = out({3 * 3 * 2, 2 * ohw}, t, d);
        be.fused().im2col(o.desc(), in[0].desc(), geom);
        return Ins{o};
      });
  add("col2im", Tol{}, [=](DType t, std::mt19937& r) { return Ins{randn({3 * 3 * 2, 2 * ohw}, t, r)}; },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor g = Tensor::zeros({2, 3, 9, 8}, t, d);
        be.fused().col2im(g.desc(), in[0].desc(), nl::Conv2dGeom{2, 3, 9, 8, 3, 2, 2, 1, 1, 0});
        return Ins{g};
      });
  const nl::Conv2dGeom pool{2, 3, 9, 8, 2, 2, 2, 2, 0, 0};
  add("maxpool2d", kExact, [](DType t, std::mt19937& r) { return Ins{randn({2, 3, 9, 8}, t, r)}; },
      [=](Backend& be, Device d, DType t, const Ins& in) {
        Tensor o = out({2, 3, pool.OH(), pool.OW()}, t, d), idx = out({2, 3, pool.OH(), pool.OW()}, DType::Int64, d);
        be.fused().maxpool2d(o.desc(), idx.desc(), in[0].desc(), pool);
        return Ins{o, idx};
      });
  add("maxpool2d.backward", kExact,
      [=](DType t, std::mt19937& r) {  // overlapping 3x3 windows, stride 1: positions receive several terms
        const nl::Conv2dGeom g3{2, 3, 9, 8, 3, 3, 1, 1, 0, 0};
        Tensor x = randn({2, 3, 9, 8}, t, r), o = Tensor::empty({2, 3, g3.OH(), g3.OW()}, t);
        Tensor idx = Tensor::empty({2, 3, g3.OH(), g3.OW()}, DType::Int64);
        nl::cpu_backend().fused().maxpool2d(o.desc(), idx.desc(), x.desc(), g3);
        return Ins{randn({2, 3, g3.OH(), g3.OW()}, t, r, 0, 100), idx};
      },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor g = Tensor::zeros({2, 3, 9, 8}, t, d);
        be.fused().maxpool2d_backward(g.desc(), in[0].desc(), in[1].desc(), nl::Conv2dGeom{2, 3, 9, 8, 3, 3, 1, 1, 0, 0});
        return Ins{g};
      });
  // ---- fused: cross-entropy (label smoothing 0.1, ignore_index 3) ----
  add("cross_entropy", Tol{},
      [](DType t, std::mt19937& r) { return Ins{randn({40, 101}, t, r, 0, 3), randint(0, 101, {40}, r)}; },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor loss = out({40}, t, d), stats = out({40, 2}, t, d), grad = out({40, 101}, t, d);
        be.fused().cross_entropy(loss.desc(), stats.desc(), in[0].desc(), in[1].desc(), 3, 0.1, grad.desc(), 0.25);
        return Ins{loss, stats, grad};
      });
  add("cross_entropy.backward", Tol{},
      [](DType t, std::mt19937& r) {
        Tensor logits = randn({40, 101}, t, r, 0, 3), target = randint(0, 101, {40}, r);
        Tensor loss = Tensor::empty({40}, t), stats = Tensor::empty({40, 2}, t);
        nl::cpu_backend().fused().cross_entropy(loss.desc(), stats.desc(), logits.desc(), target.desc(), 3, 0.1,
                                                nl::Desc{}, 0.0);
        return Ins{randn({40}, t, r), logits, stats, target};
      },
      [](Backend& be, Device d, DType t, const Ins& in) {
        Tensor g = out({40, 101}, t, d);
        be.fused().cross_entropy_backward(g.desc(), in[0].desc(), in[1].desc(), in[2].desc(), in[3].desc(), 3, 0.1);
        return Ins{g};
      });
  // ---- fused: the LayerNorm family (Xu et al. 2019), 4099 rows so the weight/bias sums are long ----
  for (int v = 0; v < nltest::kNormVariants; ++v) {
    const nl::NormKernelOpts o = nltest::norm_variant(v);
    const std::string n = "layer_norm.v" + std::to_string(v);
    auto ins = [](DType t, std::mt19937& r) {
      return Ins{randn({4099, 256}, t, r, 1, 2), randn({256}, t, r, 1, 0.5), randn({256}, t, r), randn({4099, 256}, t, r)};
    };
    add(n, Tol{}, ins, [o](Backend& be, Device d, DType t, const Ins& in) {
      Tensor y = out({4099, 256}, t, d), mean = out({4099}, t, d), rstd = out({4099}, t, d);
      be.fused().layer_norm(y.desc(), mean.desc(), rstd.desc(), in[0].desc(), in[1].desc(), in[2].desc(), o);
      return Ins{y, mean, rstd};
    });
    add(n + ".backward", Tol{}, ins, [o](Backend& be, Device d, DType t, const Ins& in) {
      Tensor y = Tensor::empty({4099, 256}, t, d), mean = Tensor::empty({4099}, t, d), rstd = Tensor::empty({4099}, t, d);
      be.fused().layer_norm(y.desc(), mean.desc(), rstd.desc(), in[0].desc(), in[1].desc(), in[2].desc(), o);
      Tensor gx = out({4099, 256}, t, d), gw = out({256}, t, d), gb = out({256}, t, d);
      be.fused().layer_norm_backward(gx.desc(), gw.desc(), gb.desc(), in[3].desc(), in[0].desc(), mean.desc(),
                                     rstd.desc(), in[1].desc(), o, false);
      return Ins{gx, gw, gb};
    });
    // accumulate: gx arrives holding a gradient (here x's values) and gets the LayerNorm gradient added
    add(n + ".backward.accumulate", Tol{}, ins, [o](Backend& be, Device d, DType t, const Ins& in) {
      Tensor y = Tensor::empty({4099, 256}, t, d), mean = Tensor::empty({4099}, t, d), rstd = Tensor::empty({4099}, t, d);
      be.fused().layer_norm(y.desc(), mean.desc(), rstd.desc(), in[0].desc(), in[1].desc(), in[2].desc(), o);
      Tensor gx = in[0].clone();
      be.fused().layer_norm_backward(gx.desc(), Desc{}, Desc{}, in[3].desc(), in[0].desc(), mean.desc(), rstd.desc(),
                                     in[1].desc(), o, true);
      return Ins{gx};
    });
  }
  // ---- fused: the same over NCHW channel groups (LN-G), 130 images so the per-channel sums are long ----
  for (int v = 0; v < nltest::kNormVariants; ++v) {
    const nl::NormKernelOpts o = nltest::norm_variant(v);
    const std::string n = "layer_norm_channels.v" + std::to_string(v);
    auto ins = [](DType t, std::mt19937& r) {
      return Ins{randn({130, 16, 100}, t, r, 1, 2), randn({16}, t, r, 1, 0.5), randn({16}, t, r),
                 randn({130, 16, 100}, t, r)};
    };
    add(n, Tol{}, ins, [o](Backend& be, Device d, DType t, const Ins& in) {
      Tensor y = out({130, 16, 100}, t, d), mean = out({130, 4, 100}, t, d), rstd = out({130, 4, 100}, t, d);
      be.fused().layer_norm_channels(y.desc(), mean.desc(), rstd.desc(), in[0].desc(), in[1].desc(), in[2].desc(), 4,
                                     o);
      return Ins{y, mean, rstd};
    });
    add(n + ".backward", Tol{}, ins, [o](Backend& be, Device d, DType t, const Ins& in) {
      Tensor y = Tensor::empty({130, 16, 100}, t, d), mean = Tensor::empty({130, 4, 100}, t, d),
             rstd = Tensor::empty({130, 4, 100}, t, d);
      be.fused().layer_norm_channels(y.desc(), mean.desc(), rstd.desc(), in[0].desc(), in[1].desc(), in[2].desc(), 4,
                                     o);
      Tensor gx = in[0].clone(), gw = out({16}, t, d), gb = out({16}, t, d);  // gx accumulates onto x's values
      be.fused().layer_norm_channels_backward(gx.desc(), gw.desc(), gb.desc(), in[3].desc(), in[0].desc(),
                                              mean.desc(), rstd.desc(), in[1].desc(), 4, o, true);
      return Ins{gx, gw, gb};
    });
  }
  // ---- fused: BatchNorm over the channels of images, 130 images so the per-channel sums are long ----
  {
    auto ins = [](DType t, std::mt19937& r) {
      return Ins{randn({130, 16, 100}, t, r, 1, 2), randn({16}, t, r, 1, 0.5), randn({16}, t, r),
                 randn({130, 16, 100}, t, r)};
    };
    add("batch_norm_channels", Tol{}, ins, [](Backend& be, Device d, DType t, const Ins& in) {
      Tensor y = out({130, 16, 100}, t, d), mean = out({16}, t, d), var = out({16}, t, d), rstd = out({16}, t, d);
      be.fused().batch_norm_channels(y.desc(), mean.desc(), var.desc(), rstd.desc(), in[0].desc(), in[1].desc(),
                                     in[2].desc(), 1e-5);
      return Ins{y, mean, var, rstd};
    });
    add("batch_norm_channels.backward", Tol{}, ins, [](Backend& be, Device d, DType t, const Ins& in) {
      Tensor y = Tensor::empty({130, 16, 100}, t, d), mean = Tensor::empty({16}, t, d), var = Tensor::empty({16}, t, d),
             rstd = Tensor::empty({16}, t, d);
      be.fused().batch_norm_channels(y.desc(), mean.desc(), var.desc(), rstd.desc(), in[0].desc(), in[1].desc(),
                                     in[2].desc(), 1e-5);
      Tensor gx = in[0].clone(), gw = out({16}, t, d), gb = out({16}, t, d);  // gx accumulates onto x's values
      be.fused().batch_norm_channels_backward(gx.desc(), gw.desc(), gb.desc(), in[3].desc(), in[0].desc(), mean.desc(),
                                              rstd.desc(), in[1].desc(), true);
      return Ins{gx, gw, gb};
    });
  }
  // ---- fused: attention rows (key padding, additive mask, causal, dropout) ----
  nl::AttentionKernelOpts ao;
  ao.batch = 2, ao.heads = 3, ao.tq = 5, ao.tk = 7, ao.scale = 0.4, ao.causal = true, ao.dropout = 0.2, ao.seed = 9,
  ao.offset = 4;
  auto att_ins = [](DType t, std::mt19937& r) {
    std::vector<double> pv(14, 0.0);
    pv[6] = pv[12] = pv[13] = 1.0;  // padded keys of both sequences
    std::vector<double> mv(35, 0.0);
    mv[2] = -INFINITY;
    return Ins{randn({30, 7}, t, r, 0, 2), Tensor::from_vector<double>(pv, {2, 7}).to(t),
               Tensor::from_vector<double>(mv, {5, 7}).to(t), randn({30, 7}, t, r)};
  };
  add("attention_softmax", Tol{}, att_ins, [ao](Backend& be, Device d, DType t, const Ins& in) {
    Tensor p = out({30, 7}, t, d), dr = out({30, 7}, t, d);
    be.fused().attention_softmax(p.desc(), dr.desc(), in[0].desc(), in[1].desc(), in[2].desc(), ao);
    return Ins{p, dr};
  });
  add("attention_softmax.backward", Tol{}, att_ins, [ao](Backend& be, Device d, DType t, const Ins& in) {
    Tensor p = Tensor::empty({30, 7}, t, d), dr = Tensor::empty({30, 7}, t, d);
    be.fused().attention_softmax(p.desc(), dr.desc(), in[0].desc(), in[1].desc(), in[2].desc(), ao);
    Tensor gs = out({30, 7}, t, d), dr2 = out({30, 7}, t, d);
    be.fused().attention_softmax_backward(gs.desc(), dr2.desc(), in[3].desc(), p.desc(), ao);
    return Ins{gs, dr2};
  });
  // ---- fused: Adam / AdamW step ----
  for (bool decoupled : {false, true})
    add(decoupled ? "adamw_step" : "adam_step", Tol{},
        [](DType t, std::mt19937& r) {
          return Ins{randn({4097}, t, r), randn({4097}, t, r), randn({4097}, t, r, 0, 0.1), abs(randn({4097}, t, r, 0, 0.1))};
        },
        [decoupled](Backend& be, Device, DType, const Ins& in) {
          Tensor p = in[0].clone(), m = in[2].clone(), v = in[3].clone();
          be.fused().adam_step(p.desc(), in[1].desc(), m.desc(), v.desc(),
                               nl::AdamKernelOpts{1e-3, 0.9, 0.98, 1e-8, 0.01, decoupled, 7});
          return Ins{p, m, v};
        });
  return c;
}

/// NMSE of `a` against `b` (host copies; plain squared error when b is all zero). Mismatching NaN /
/// infinity positions give +infinity.
double nmse(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  const auto x = a.to_vector<double>(), y = b.to_vector<double>();
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(y[i]) || !std::isfinite(x[i])) {
      if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return INFINITY;
      continue;
    }
    num += (x[i] - y[i]) * (x[i] - y[i]);
    den += y[i] * y[i];
  }
  return den > 0 ? num / den : num;
}
}  // namespace

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = build();
  return cases;
}

const std::vector<DType>& op_check_dtypes() {
  static const std::vector<DType> d = {DType::Float32, DType::Float64, DType::BFloat16};
  return d;
}

std::vector<Result> run_op_checks(Device dev, const std::vector<DType>& dtypes, const std::string& filter, int reps) {
  std::vector<Result> res;
  Backend& cpu = nl::backend_for(nl::DeviceType::CPU);
  Backend& be = nl::backend_for(dev.type);
  for (const OpCase& c : op_cases()) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    for (DType t : dtypes) {
      if (c.tol.of(t) < 0) continue;  // the op does not take this dtype
      // the CPU reference of a mixed-precision product needs oneDNN (a build without it has no such rows)
      if (c.name.rfind("gemm_mixed", 0) == 0 && !nl::cpu_bf16_products_available()) continue;
      Result r;
      r.op = c.name;
      r.dtype = nl::dtype_name(t);
      r.tol = c.tol.of(t);
      try {
        std::mt19937 rng(std::hash<std::string>{}(c.name) ^ (unsigned)t);
        const Ins host = c.inputs(t, rng);
        Ins on_dev;
        for (const Tensor& x : host) on_dev.push_back(x.to(dev));
        const Ins want = c.run(cpu, Device::cpu(), t, host);
        const Ins got = c.run(be, dev, t, on_dev);
        if (got.size() != want.size()) throw std::runtime_error("output count differs");
        for (size_t k = 0; k < want.size(); ++k) r.nmse = std::max(r.nmse, nmse(got[k], want[k]));
        r.pass = r.nmse <= r.tol;
        if (reps > 0) {
          std::vector<double> ms;
          be.synchronize(dev.index);
          for (int i = 0; i < reps; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            c.run(be, dev, t, on_dev);
            be.synchronize(dev.index);
            ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
          }
          std::sort(ms.begin(), ms.end());
          r.device_ms = ms[ms.size() / 2];
        }
      } catch (const std::exception& e) {
        r.error = e.what();
        r.pass = false;
      }
      res.push_back(r);
    }
  }
  return res;
}

}  // namespace nltest::opcheck
