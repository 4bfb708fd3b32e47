// Composite conv helpers: im2col / col2im as kh*kw strided copies (adds) between the columns matrix and
// a zero-padded copy of the image, and max pooling as a window gather + reduce(Max / ArgMax) with the
// argmax turned back into the flat h*W+w index the CPU kernel stores (cpu_conv.cpp).
#include <limits>
#include <vector>

#include "backends/composite/composite_kernels.h"
#include "backends/composite/scratch.h"

namespace nl {
using composite::reshaped;
using composite::Scratch;
using composite::view;

namespace {
// The padded image [N, C, Hp, Wp] and the view of its interior that holds the unpadded image.
struct Padded {
  int64_t Hp, Wp;
  explicit Padded(const Conv2dGeom& g) : Hp(g.H + 2 * g.ph), Wp(g.W + 2 * g.pw) {}
  Desc interior(const Desc& p, const Conv2dGeom& g) const {
    return view(p, {g.N, g.C, g.H, g.W}, {g.C * Hp * Wp, Hp * Wp, Wp, 1}, g.ph * Wp + g.pw);
  }
  // Window element (ki, kj) of every output position, laid out [C, N, OH, OW] (the columns' order).
  Desc window_cn(const Desc& p, const Conv2dGeom& g, int64_t ki, int64_t kj) const {
    return view(p, {g.C, g.N, g.OH(), g.OW()}, {Hp * Wp, g.C * Hp * Wp, g.sh * Wp, g.sw}, ki * Wp + kj);
  }
  // The same, laid out [N, C, OH, OW] (pooling's order).
  Desc window_nc(const Desc& p, const Conv2dGeom& g, int64_t ki, int64_t kj) const {
    return view(p, {g.N, g.C, g.OH(), g.OW()}, {g.C * Hp * Wp, Hp * Wp, g.sh * Wp, g.sw}, ki * Wp + kj);
  }
};
// Row (ki, kj) block of the columns matrix [C*kh*kw, N*OH*OW], seen as [C, N, OH, OW].
Desc cols_block(const Desc& cols, const Conv2dGeom& g, int64_t ki, int64_t kj) {
  const int64_t L = g.N * g.OH() * g.OW();
  return view(cols, {g.C, g.N, g.OH(), g.OW()}, {g.kh * g.kw * L, g.OH() * g.OW(), g.OW(), 1}, (ki * g.kw + kj) * L);
}
}  // namespace

void CompositeKernels::im2col(const Desc& cols, const Desc& in, const Conv2dGeom& g) {
  if (cols.numel() == 0) return;
  const Padded pd(g);
  Scratch p(be_, in.dtype, in.device_index, {g.N, g.C, pd.Hp, pd.Wp});
  be_.fill(p.d(), 0.0);
  be_.copy(pd.interior(p.d(), g), reshaped(in, {g.N, g.C, g.H, g.W}));
  for (int64_t ki = 0; ki < g.kh; ++ki)
    for (int64_t kj = 0; kj < g.kw; ++kj) be_.copy(cols_block(cols, g, ki, kj), pd.window_cn(p.d(), g, ki, kj));
}

void CompositeKernels::col2im(const Desc& gin, const Desc& cols, const Conv2dGeom& g) {
  if (cols.numel() == 0) return;
  const Padded pd(g);
  Scratch p(be_, gin.dtype, gin.device_index, {g.N, g.C, pd.Hp, pd.Wp});
  be_.fill(p.d(), 0.0);
  for (int64_t ki = 0; ki < g.kh; ++ki)
    for (int64_t kj = 0; kj < g.kw; ++kj) {  // within one (ki, kj) no two positions overlap
      const Desc w = pd.window_cn(p.d(), g, ki, kj);
      be_.binary(BinaryOp::Add, w, w, cols_block(cols, g, ki, kj));
    }
  const Desc gi = reshaped(gin, {g.N, g.C, g.H, g.W});
  be_.binary(BinaryOp::Add, gi, gi, pd.interior(p.d(), g));
}

void CompositeKernels::maxpool2d(const Desc& out, const Desc& idx, const Desc& in, const Conv2dGeom& g) {
  const int64_t OH = g.OH(), OW = g.OW(), K = g.kh * g.kw, M = g.N * g.C * OH * OW;
  if (M == 0) return;
  const Padded pd(g);
  const int dev = in.device_index;
  Scratch p(be_, in.dtype, dev, {g.N, g.C, pd.Hp, pd.Wp}), win(be_, in.dtype, dev, {M, K});
  be_.fill(p.d(), -std::numeric_limits<double>::infinity());
  be_.copy(pd.interior(p.d(), g), reshaped(in, {g.N, g.C, g.H, g.W}));
  for (int64_t ki = 0; ki < g.kh; ++ki)
    for (int64_t kj = 0; kj < g.kw; ++kj)
      be_.copy(view(win.d(), {g.N, g.C, OH, OW}, {g.C * OH * OW * K, OH * OW * K, OW * K, K}, ki * g.kw + kj),
               pd.window_nc(p.d(), g, ki, kj));
  be_.reduce(ReduceOp::Max, reshaped(out, {M}), win.d(), 1);
  // idx = (oh*sh - ph + ki) * W + (ow*sw - pw + kj) with (ki, kj) = divmod(argmax, kw).
  Scratch a(be_, DType::Int64, dev, {M}), ki(be_, DType::Int64, dev, {M}), t(be_, DType::Int64, dev, {M}),
      kw(be_, DType::Int64, dev, {1}), base(be_, DType::Int64, dev, {OH, OW});
  be_.reduce(ReduceOp::ArgMax, a.d(), win.d(), 1);
  be_.fill(kw.d(), (double)g.kw);
  be_.binary(BinaryOp::Div, ki.d(), a.d(), kw.as({M}, {0}));          // ki (integer division)
  be_.unary(UnaryOp::Affine, t.d(), ki.d(), (double)g.kw, 0.0);
  be_.binary(BinaryOp::Sub, a.d(), a.d(), t.d());                       // kj
  be_.unary(UnaryOp::Affine, t.d(), ki.d(), (double)g.W, 0.0);
  be_.binary(BinaryOp::Add, t.d(), t.d(), a.d());                       // ki*W + kj
  // base[oh, ow] = row[oh] + col[ow], row[oh] = (oh*sh - ph)*W, col[ow] = ow*sw - pw, made on the device
  // (composite::iota) so that no table travels from the host per call.
  Scratch row(be_, DType::Int64, dev, {OH}), col(be_, DType::Int64, dev, {OW});
  composite::iota(be_, row.d(), (double)(-g.ph * g.W), (double)(g.sh * g.W));
  composite::iota(be_, col.d(), (double)(-g.pw), (double)g.sw);
  be_.binary(BinaryOp::Add, base.d(), row.as({OH, OW}, {1, 0}), col.as({OH, OW}, {0, 1}));
  be_.binary(BinaryOp::Add, view(idx, {g.N * g.C, OH, OW}, {OH * OW, OW, 1}),
             view(t.d(), {g.N * g.C, OH, OW}, {OH * OW, OW, 1}), base.as({g.N * g.C, OH, OW}, {0, OW, 1}));
}

void CompositeKernels::maxpool2d_backward(const Desc& gin, const Desc& gout, const Desc& idx, const Conv2dGeom& g) {
  const int64_t planes = g.N * g.C, OHW = g.OH() * g.OW();
  if (planes * OHW == 0) return;
  be_.scatter_add_rows(reshaped(gin, {planes, g.H * g.W}), reshaped(idx, {planes, OHW}),
                       reshaped(gout, {planes, OHW}));
}

}  // namespace nl
