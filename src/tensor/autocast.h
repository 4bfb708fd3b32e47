#pragma once
// Autocast (mixed precision, issue 26; docs/mixed-precision.md): a thread-local scoped guard, as
// torch.autocast, and the ONE table that names, per op, the dtype the op runs in while the guard is
// active. Nothing else lists ops: the autograd functions ask `autocast_cast_to` which dtype an input must
// be cast to (the casts themselves are tape nodes, autograd/functions/cast.cpp), the tensor front ends
// report the dtype each kernel actually ran in (`autocast_observe`), and a test compares the two
// (AutocastTrace). Plain C++, no autograd: this is the tensor layer's dtype policy.
#include <optional>
#include <utility>
#include <vector>

#include "tensor/dtype.h"

namespace nl {

/// The ops the table knows. Every other op runs in its inputs' dtype (under autocast that is float32:
/// the products return float32).
enum class AutocastOp {
  // lower precision: bfloat16 operands, float32 accumulation, float32 result
  MatMul,         ///< matmul (autograd matmul; Transformer-XL's relative-attention products)
  Linear,         ///< linear / addmm (every linear layer; the vocabulary projection)
  Attention,      ///< the attention's per-head products q·kᵀ and P·V (and their gradients)
  FFN,            ///< the Transformer FFN's fused products fc1, fc2 (ffn_relu)
  Conv2d,         ///< conv2d's im2col product
  Gemm,           ///< any product kernel the tensor front end runs (matmul, addmm, matmul_out, per-head grid)
  // float32: inputs in bfloat16 are cast up to float32
  Norm,           ///< every norm of nn/norm (its statistics), the fused LayerNorm / PowerNorm kernels
  Softmax,        ///< softmax, log_softmax and the attention's softmax rows
  CrossEntropy,   ///< the loss (fused cross-entropy with label smoothing): float32 math on bfloat16 or float32 logits
  Reduction,      ///< sum, mean, var, max (and so the norms for gradient clipping)
  Optimizer,      ///< the optimizer update on the master weights (adam_step)
};

/// How an op runs under autocast.
enum class CastPolicy {
  Lower,    ///< float32 inputs are cast to the autocast dtype (bfloat16); float64 is left alone
  Float32,  ///< inputs in the autocast dtype are cast up to float32; float32 and float64 stay
  Float32Math,  ///< inputs are taken as they are: a bfloat16 input is read widened inside the kernel, which
                ///< computes in float32 (no cast pass; its gradient is bfloat16), as PyTorch's float32 ops
                ///< on a bfloat16 tensor after autocast's cast, without the cast's [N, C] copy
};

/// One row of the table.
struct AutocastRule {
  AutocastOp op;
  const char* name;  ///< the op as errors, traces and docs name it
  CastPolicy policy;
};
/// The table, one row per AutocastOp, in enum order.
const std::vector<AutocastRule>& autocast_table();
/// The row of `op`.
const AutocastRule& autocast_rule(AutocastOp op);

/// The active autocast dtype of this thread (bfloat16), or none outside any enabled guard.
std::optional<DType> autocast_dtype();

/// RAII: sets this thread's autocast state for its scope and restores the previous one on exit, so
/// guards nest (as torch.autocast): `AutocastGuard g(DType::BFloat16);` turns autocast on,
/// `AutocastGuard g(DType::BFloat16, false)` turns it off inside an enabled scope. Only bfloat16 is a
/// lower dtype today: another dtype throws std::invalid_argument. The guard changes what ops *record*
/// (casts and bfloat16 products); backward runs the recorded graph and needs no guard.
class AutocastGuard {
 public:
  explicit AutocastGuard(DType dtype, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  std::optional<DType> prev_;
};

/// The dtype an input of dtype `in` must be cast to before `op` runs under the active guard, or none
/// when it runs as it is (no guard, a non-floating dtype, float64, or already the op's dtype).
std::optional<DType> autocast_cast_to(AutocastOp op, DType in);

/// For the tensor front ends: reports that a kernel of `op` runs with operands of dtype `dt` (recorded
/// only while an AutocastTrace is active on this thread; a thread-local test otherwise).
void autocast_observe(AutocastOp op, DType dt);

/// RAII: records every autocast_observe of this thread while alive (nested traces: the inner one
/// records). For the test that the table is what runs, and for `normlab bench --bf16`'s check.
class AutocastTrace {
 public:
  AutocastTrace();
  ~AutocastTrace();
  AutocastTrace(const AutocastTrace&) = delete;
  AutocastTrace& operator=(const AutocastTrace&) = delete;
  /// (op, operand dtype) in the order the kernels ran.
  const std::vector<std::pair<AutocastOp, DType>>& entries() const { return entries_; }
  /// Whether `dt` is what the table allows for `op` when autocast to bfloat16 was on: bfloat16 for a
  /// Lower op (float64 too: it is never lowered), float32 or float64 for a Float32 op.
  static bool allowed(AutocastOp op, DType dt);

 private:
  friend void autocast_observe(AutocastOp op, DType dt);
  std::vector<std::pair<AutocastOp, DType>> entries_;
  AutocastTrace* prev_;
};

}  // namespace nl
