// The attention row kernels' bfloat16 operand (tensor/ops_nn.h attention_softmax_out, its backward): under
// autocast the row pass writes the operand of P·V and dV in bfloat16 itself. It must be the float32
// operand (the dropped weights, or P without dropout) rounded once: the bits of the cast it replaces.
#include <catch2/catch.hpp>

#include <cstring>
#include <stdexcept>

#include "tensor/bfloat16.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"
#include "tensor/tensor.h"

using namespace nl;
using Catch::Matchers::Contains;

namespace {
bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor ac = a.contiguous(), bc = b.contiguous();
  const size_t bytes = (size_t)a.numel() * dtype_size(a.dtype());
  if (a.dtype() == DType::BFloat16) return std::memcmp(ac.data<bfloat16>(), bc.data<bfloat16>(), bytes) == 0;
  return std::memcmp(ac.data<float>(), bc.data<float>(), bytes) == 0;
}
}  // namespace

TEST_CASE("attention rows: a bfloat16 `dropped` is the float32 operand rounded once, forward and backward",
          "[attention][bf16]") {
  REQUIRE(attention_bf16_operands(Tensor::zeros({1, 1, 1, 1})));  // the CPU kernels write it
  CHECK_FALSE(attention_bf16_operands(Tensor::zeros({1, 1, 1, 1}, DType::Float64)));
  manual_seed(5);
  // tk = 32 (the fixed-length rows) and 37 (run-time length, a tail of 5 past two 16-blocks); causal on the
  // second; key padding and an additive mask on both
  for (const int64_t tk : {32, 37})
    for (const double p : {0.0, 0.2}) {
      INFO("tk " << tk << ", dropout " << p);
      const int64_t B = 2, H = 3, Tq = 5;
      const Tensor scores = Tensor::randn({B, H, Tq, tk}, 0.0, 2.0);
      Tensor pad = Tensor::zeros({B, tk});
      pad.data<float>()[tk - 1] = 1.0f;  // batch 0's last key padded
      Tensor mask = Tensor::zeros({Tq, tk});
      mask.data<float>()[3] = -INFINITY;  // query 0 never sees key 3
      AttentionRowOptions o;
      o.scale = 0.3, o.dropout = p, o.seed = 11, o.offset = 7, o.causal = tk == 37;
      Tensor p32 = Tensor::empty(scores.shape()), d32 = Tensor::empty(scores.shape());
      attention_softmax_out(p32, d32, scores, pad, mask, o);
      const Tensor operand = p > 0 ? d32 : p32;
      Tensor pb = Tensor::empty(scores.shape()), d16 = Tensor::empty(scores.shape(), DType::BFloat16);
      attention_softmax_out(pb, d16, scores, pad, mask, o);
      CHECK(same_bits(pb, p32));                          // P itself is unchanged
      CHECK(same_bits(d16, operand.to(DType::BFloat16)));  // the cast's bits
      // backward: the same gradient of the scores, and the regenerated operand in bfloat16
      const Tensor gprobs = Tensor::randn(scores.shape());
      Tensor gs32 = Tensor::empty(scores.shape()), e32 = Tensor::empty(scores.shape());
      attention_softmax_backward_out(gs32, e32, gprobs, p32, o);
      Tensor gsb = Tensor::empty(scores.shape()), e16 = Tensor::empty(scores.shape(), DType::BFloat16);
      attention_softmax_backward_out(gsb, e16, gprobs, p32, o);
      CHECK(same_bits(gsb, gs32));
      CHECK(same_bits(e16, (p > 0 ? e32 : p32).to(DType::BFloat16)));
      if (p > 0) CHECK(same_bits(e32, d32));  // the backward regenerates the forward's mask
    }
}

TEST_CASE("attention rows: a bfloat16 `dropped` beside float64 scores or of the wrong shape is a clear error",
          "[attention][bf16]") {
  const Tensor s64 = Tensor::randn({1, 2, 3, 4}, 0.0, 1.0, DType::Float64);
  Tensor p64 = Tensor::empty(s64.shape(), DType::Float64), d16 = Tensor::empty(s64.shape(), DType::BFloat16);
  AttentionRowOptions o;
  CHECK_THROWS_WITH(attention_softmax_out(p64, d16, s64, Tensor(), Tensor(), o), Contains("float32 scores"));
  const Tensor s = Tensor::randn({1, 2, 3, 4});
  Tensor p = Tensor::empty(s.shape()), bad = Tensor::empty({1, 2, 3, 5}, DType::BFloat16);
  CHECK_THROWS_WITH(attention_softmax_out(p, bad, s, Tensor(), Tensor(), o), Contains("[1, 2, 3, 4]"));
  CHECK_THROWS_WITH(attention_softmax_backward_out(p, bad, s, s, o), Contains("`dropped` must be contiguous"));
}
