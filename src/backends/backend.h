#pragma once
// The Backend interface: memory and compute kernels for one device type. src/tensor dispatches every
// op to the backend of its tensors' device; backends know nothing of autograd or layers. A backend
// receives strided views (`Desc`, backends/desc.h) whose operands were already broadcast to the output
// shape by the front end (stride 0 on broadcast dims). Outputs are always contiguous unless stated
// otherwise.
//
// Two layers: the *core* kernels below (memory, fill/copy/elementwise/random, reductions, row
// gathers/scatters, GEMM) are pure virtual and every backend implements them; the *fused* kernels
// (FusedKernels, backends/fused_kernels.h) are optional: Backend::fused() returns the backend's own
// implementation when it set one (set_fused) and otherwise CompositeKernels, which composes each fused
// kernel from the core ones. Callers always write `backend_for(t).fused().layer_norm(...)`.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/desc.h"
#include "backends/fused_kernels.h"
#include "tensor/device.h"
#include "tensor/dtype.h"

namespace nl {

/// Elementwise unary ops; `a`, `b` are the op's scalar parameters where noted.
enum class UnaryOp {
  Neg, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Relu, Gelu, GeluGrad, Abs, Square, Reciprocal, Sign,
  PowScalar,  ///< x^a
  Affine,     ///< a*x + b
  ClampMin,   ///< max(x, a)
  ClampMax,   ///< min(x, a)
  GtScalar,   ///< x > a ? 1 : 0
};
/// True if unary `op` is defined for int64 tensors (neg, abs, square, sign, relu, affine, clamps, gt);
/// the math ops (exp, log, sqrt, ...) need float tensors.
constexpr bool unary_supports_int(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: case UnaryOp::Abs: case UnaryOp::Square: case UnaryOp::Sign: case UnaryOp::Relu:
    case UnaryOp::Affine: case UnaryOp::ClampMin: case UnaryOp::ClampMax: case UnaryOp::GtScalar:
      return true;
    case UnaryOp::Exp: case UnaryOp::Log: case UnaryOp::Sqrt: case UnaryOp::Rsqrt: case UnaryOp::Tanh:
    case UnaryOp::Sigmoid: case UnaryOp::Gelu: case UnaryOp::GeluGrad: case UnaryOp::Reciprocal:
    case UnaryOp::PowScalar:
      return false;
  }
  return false;
}
/// Elementwise binary ops (comparisons return 1/0 in the operands' dtype).
/// ReluGrad: out = y <= 0 ? 0 : x (the ReLU backward, x = upstream gradient, y = ReLU output; a NaN y passes x, as PyTorch).
enum class BinaryOp { Add, Sub, Mul, Div, Pow, Maximum, Minimum, Eq, Ne, Gt, Ge, Lt, Le, ReluGrad };
/// Reductions over the trailing dims of the input view.
enum class ReduceOp { Sum, Mean, Max, Min, ArgMax };

/// The op's name in errors and profiles ("exp", "add", "sum", ...); "unary op" etc. for a value outside the enum.
const char* unary_name(UnaryOp op);
const char* binary_name(BinaryOp op);
const char* reduce_name(ReduceOp op);

/// One operand of a product grid: matrix (o, b) starts at data + o * outer + b * stride (elements),
/// rows `ld` elements apart; `trans` reads it transposed (row-major storage of op(X)^T).
struct GemmMatrix {
  const void* data = nullptr;
  int64_t ld = 0, stride = 0, outer = 0;
  bool trans = false;
};
/// A grid of `outer` × `batch` mixed-precision products, row-major:
///   C(o, b) = act(alpha * op(A(o, b)) · op(B(o, b)) + beta * C(o, b) + bias)
/// with A [M, K] and B [K, N] after op (transposition), bfloat16 operands (`ab`), float32
/// accumulation, and C [M, N] in `c` (float32 or bfloat16; beta reads the old C in that dtype). `bias`
/// is an optional float32 row of N values added to every row; `relu` applies max(0, ·) last. A zero
/// stride or outer step broadcasts an operand over that grid axis (C's must be distinct). Transformer
/// uses: linear layers (bias, with ReLU in the FFN), their gradients (beta = 1 accumulates), the
/// attention's per-head products (outer = sequences, batch = heads).
struct MixedGemm {
  DType ab = DType::BFloat16;
  DType c = DType::Float32;
  int64_t M = 0, N = 0, K = 0, batch = 1, outer = 1;
  double alpha = 1.0, beta = 0.0;
  GemmMatrix A, B;
  void* C = nullptr;
  int64_t ldc = 0, strideC = 0, outerC = 0;
  const float* bias = nullptr;
  bool relu = false;
  int device_index = 0;
};

/// Memory and core kernels of one device type. All methods throw std::runtime_error on failure (and
/// std::invalid_argument / std::out_of_range on bad input, as documented per method). Every check
/// runs before a kernel's parallel loop: an exception must never leave an OpenMP region, where it
/// would call std::terminate. An asynchronous backend (CUDA) that finds an error only inside a kernel
/// (an index out of range in index_select_rows / gather_rows / cross_entropy) records it and throws
/// std::out_of_range naming the kernel at the next synchronize() or copy_to_host() of that device.
class Backend {
 public:
  /// Creates the composite fallback for the fused kernels (used until set_fused installs others).
  Backend();
  virtual ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  virtual DeviceType type() const = 0;
  virtual std::string name() const = 0;
  /// The device `device_index` for run records, e.g. "<GPU name> (sm_<XY>, <memory> GiB)" for a GPU; the
  /// backend's name() where a device has no model of its own. Throws what the backend's device queries throw.
  virtual std::string device_name(int device_index) const {
    (void)device_index;
    return name();
  }

  /// The fused kernels: the backend's own (set_fused) or the composite forms built on the core kernels.
  FusedKernels& fused() { return fused_ ? *fused_ : *composite_; }
  /// True when the backend installed its own fused kernels (false: every fused call is composite).
  bool has_own_fused() const { return fused_ != nullptr; }

  // ---- memory ----
  /// Memory for `nbytes` on device `device_index`; throws std::runtime_error when out of memory.
  virtual void* allocate(size_t nbytes, int device_index) = 0;
  /// Returns a block from allocate() (same nbytes and device) to the backend's cache.
  virtual void deallocate(void* p, size_t nbytes, int device_index) = 0;
  /// Bytes held by the caching allocator (in use + cached) — for diagnostics.
  virtual size_t bytes_cached() const { return 0; }
  /// Copies device memory to the host; waits for pending kernels of that device first and reports
  /// their asynchronous errors (see the class comment).
  virtual void copy_to_host(void* dst, const void* src, size_t nbytes, int device_index) = 0;
  /// Copies host memory to the device (returns when `src` may be reused).
  virtual void copy_from_host(void* dst, const void* src, size_t nbytes, int device_index) = 0;
  /// Waits for the device's pending kernels; throws std::out_of_range naming the kernel that found an
  /// index out of range since the last synchronisation (then clears it). No-op on the CPU.
  virtual void synchronize(int device_index) {}

  // ---- elementwise ----
  virtual void fill(const Desc& out, double value) = 0;
  /// out = in (any strides, dtype conversion allowed; shapes equal).
  virtual void copy(const Desc& out, const Desc& in) = 0;
  /// out = op(in) elementwise; throws std::invalid_argument for an int64 tensor and an op for which
  /// unary_supports_int(op) is false.
  virtual void unary(UnaryOp op, const Desc& out, const Desc& in, double a, double b) = 0;
  virtual void binary(BinaryOp op, const Desc& out, const Desc& x, const Desc& y) = 0;
  /// out = cond != 0 ? x : y.
  virtual void where(const Desc& out, const Desc& cond, const Desc& x, const Desc& y) = 0;
  /// Counter-based uniform [lo, hi) or normal(mean=lo, std=hi) fill of contiguous `out`, reproducible
  /// for (seed, offset): element i uses counter offset + i (cpu/counter_rng.h; identical on every device).
  virtual void random(const Desc& out, bool normal, double lo, double hi, uint64_t seed, uint64_t offset) = 0;

  // ---- reductions ----
  /// Reduces `in` over its trailing `nreduce` dims into contiguous `out` (numel = product of leading dims).
  /// `out` has in's dtype, except: ArgMax writes int64, and Sum / Mean of a bfloat16 `in` write float32 (a
  /// bias gradient under autocast; the terms widened exactly and summed with at least float32 accuracy). Max/Min/ArgMax
  /// over an empty dim throw std::invalid_argument; other ops on bfloat16 throw it naming the op.
  virtual void reduce(ReduceOp op, const Desc& out, const Desc& in, int nreduce) = 0;

  // ---- row gathers / scatters (embedding, gather) ----
  /// out[i, :] = table[idx[i], :] for contiguous table [V, D] of any dtype (bfloat16 included: rows are
  /// moved, not computed); throws on an id out of [0, V).
  virtual void index_select_rows(const Desc& out, const Desc& table, const Desc& idx) = 0;
  /// table[idx[i], :] += src[i, :] (embedding backward).
  virtual void index_add_rows(const Desc& table, const Desc& idx, const Desc& src) = 0;
  /// out[r, k] = in[r, idx[r, k]] for contiguous in [R, C] and int64 idx [R, K]; throws on an index
  /// outside [0, C).
  virtual void gather_rows(const Desc& out, const Desc& in, const Desc& idx) = 0;
  /// gin[r, idx[r, k]] += g[r, k]: the adjoint of gather_rows.
  virtual void scatter_add_rows(const Desc& gin, const Desc& idx, const Desc& g) = 0;

  // ---- linear algebra (column-major BLAS convention is NOT used: all row-major) ----
  /// C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b] for b < batch; row-major with leading dims; the
  /// pointers live on device `device_index`. Float dtypes only. Throws std::invalid_argument for int64,
  /// or if M, N, K or a leading dim exceeds 2^31 - 1 (BLAS takes int), before any BLAS call.
  virtual void gemm(DType t, bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha,
                    const void* A, int64_t lda, int64_t strideA, const void* B, int64_t ldb, int64_t strideB,
                    double beta, void* C, int64_t ldc, int64_t strideC, int64_t batch, int device_index) = 0;
  /// gemm() over an outer × batch grid of products: product (o, b) reads A + o * outerA + b * strideA
  /// (elements; B and C alike), e.g. the heads (b) of every sequence (o) of a heads-last attention
  /// layout. The default calls gemm() once per o; the CPU backend runs small products as one grid.
  virtual void gemm_grid(DType t, bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha,
                         const void* A, int64_t lda, int64_t strideA, int64_t outerA, const void* B, int64_t ldb,
                         int64_t strideB, int64_t outerB, double beta, void* C, int64_t ldc, int64_t strideC,
                         int64_t outerC, int64_t batch, int64_t outer, int device_index);
  /// Mixed-precision products (MixedGemm: bfloat16 operands, float32 accumulation, float32 or bfloat16
  /// C, optional bias and ReLU). Throws std::invalid_argument for dtypes other than those, a negative
  /// extent, or an extent above 2^31 - 1, and std::runtime_error when the backend cannot run them (the
  /// default: "bfloat16 products are not available on <backend>"; the CPU backend without oneDNN).
  virtual void gemm_mixed(const MixedGemm& g);
  /// Lets this backend's float32 products use TF32 (see set_allow_tf32 in mixed_precision.h, which
  /// forwards to it); the default ignores it (the CPU has no TF32).
  virtual void set_allow_tf32(bool on) {}

 protected:
  /// Installs the backend's own fused kernels (typically `this`, or a CompositeKernels subclass that
  /// overrides the kernels the backend has); `f` must outlive the backend.
  void set_fused(FusedKernels* f) { fused_ = f; }

 private:
  FusedKernels* fused_ = nullptr;
  std::unique_ptr<FusedKernels> composite_;
};

/// The backend for a device type; throws std::runtime_error when that backend is not built
/// (e.g. "CUDA backend not available: rebuild with nvcc on PATH").
/// Built-in backends (CPU; CUDA when compiled in) are found through functions the registry calls
/// directly, so they survive static linking (no static-initialiser registration to be dropped).
Backend& backend_for(DeviceType t);
/// Installs (or, with nullptr, removes) a backend for `t`, overriding the built-in one; for tests and
/// out-of-tree backends. Not thread-safe with concurrent backend_for calls.
void register_backend(DeviceType t, Backend* b);
/// True when a backend for `t` was built in (or registered), whether or not a device is present.
bool backend_built(DeviceType t);
/// True when a backend for `t` was built and a device is present (always true for CPU).
bool backend_available(DeviceType t);
/// Number of devices of type `t` (1 for CPU; 0 when the CUDA backend is not built or finds no GPU).
int device_count(DeviceType t);
/// Throws std::invalid_argument naming the device and the fix when `d` cannot hold tensors:
/// "no CUDA device: ... use --device cpu" without a GPU, or an index >= device_count.
void check_device(Device d);
/// The model of device `d` for run records (Backend::device_name: the GPU's name, compute capability and
/// memory for cuda:N); "" for the CPU, whose model the caller reads itself. Throws as check_device(d).
std::string device_name(Device d);

}  // namespace nl
