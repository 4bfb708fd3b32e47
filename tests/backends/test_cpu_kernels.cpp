// The CPU backend's conv/pool kernels (float32: the AVX-512 paths) against plain reference loops, bit for
// bit, over shapes that hit every path (narrow planes batched, wide planes masked, odd sizes, padding).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "tensor/tensor.h"

using namespace nl;

namespace {

// Values from a few levels (many ties), sometimes NaN.
std::vector<float> tie_data(int64_t n, unsigned seed, bool nans) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) {
    const unsigned r = rng() % 64;
    x = (nans && r == 0) ? std::numeric_limits<float>::quiet_NaN() : (float)(r % 5) - 2.0f;
  }
  return v;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The scalar semantics of the 2x2 stride-2 window: b > a, d > c, then bottom > top, where a later value
// also wins when it is NaN (PyTorch: a NaN in the window is the maximum, the last one in raster order).
void ref_pool2x2(const std::vector<float>& x, std::vector<float>& y, std::vector<int64_t>& ix, const Conv2dGeom& g) {
  const int64_t OH = g.OH(), OW = g.OW();
  y.assign(g.N * g.C * OH * OW, 0);
  ix.assign(y.size(), 0);
  for (int64_t p = 0; p < g.N * g.C; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const float* r0 = x.data() + p * g.H * g.W + 2 * oh * g.W + 2 * ow;
        const float a = r0[0], b = r0[1], c = r0[g.W], d = r0[g.W + 1];
        const bool i1 = b > a || std::isnan(b), i2 = d > c || std::isnan(d);
        const float m1 = i1 ? b : a, m2 = i2 ? d : c;
        const bool i3 = m2 > m1 || std::isnan(m2);
        const int64_t o = (p * OH + oh) * OW + ow;
        y[o] = i3 ? m2 : m1;
        ix[o] = 2 * oh * g.W + 2 * ow + (i3 ? g.W + (int64_t)i2 : (int64_t)i1);
      }
}

}  // namespace

TEST_CASE("cpu kernels: 2x2 max pooling matches the scalar loop bit for bit, ties and NaN included", "[kernels][threads2]") {
  const int64_t shapes[][4] = {{32, 20, 24, 24}, {32, 50, 8, 8}, {3, 2, 4, 4}, {2, 3, 2, 2}, {2, 2, 16, 16},
                               {2, 3, 5, 7},     {1, 2, 34, 32}, {2, 2, 6, 6}, {1, 1, 9, 9},  {1, 3, 8, 10},
                               {2, 2, 66, 70},   {3, 1, 2, 4},   {2, 5, 12, 8}};
  unsigned seed = 1;
  for (const auto& s : shapes)
    for (bool nans : {false, true}) {
      Conv2dGeom g{s[0], s[1], s[2], s[3], 2, 2, 2, 2, 0, 0};
      auto xv = tie_data(s[0] * s[1] * s[2] * s[3], seed++, nans);
      Tensor x = Tensor::from_vector<float>(xv, {s[0], s[1], s[2], s[3]});
      Tensor y = Tensor::empty({g.N, g.C, g.OH(), g.OW()});
      Tensor ix = Tensor::empty(y.shape(), DType::Int64);
      cpu_backend().maxpool2d(y.desc(), ix.desc(), x.desc(), g);
      std::vector<float> ry;
      std::vector<int64_t> ri;
      ref_pool2x2(xv, ry, ri, g);
      const float* py = static_cast<const float*>(y.desc().data);
      const int64_t* pi = static_cast<const int64_t*>(ix.desc().data);
      int bad = 0;
      for (size_t k = 0; k < ry.size(); ++k) bad += !same_bits(py[k], ry[k]) || pi[k] != ri[k];
      INFO("shape " << s[0] << "x" << s[1] << "x" << s[2] << "x" << s[3] << " nans " << nans);
      CHECK(bad == 0);
    }
}

TEST_CASE("cpu kernels: im2col and col2im match plain loops bit for bit", "[kernels][threads2]") {
  // {N, C, H, W, k, stride, pad}: the MNIST CNN's two convs, narrow and wide planes, stride and padding.
  const int64_t geoms[][7] = {{32, 1, 28, 28, 5, 1, 0}, {32, 20, 12, 12, 5, 1, 0}, {2, 3, 16, 16, 3, 1, 0},
                              {2, 2, 17, 19, 3, 1, 0},  {3, 2, 7, 5, 5, 1, 0},     {2, 3, 9, 8, 3, 2, 1},
                              {2, 2, 6, 7, 3, 1, 1},    {1, 2, 5, 5, 5, 1, 0},     {2, 1, 4, 30, 2, 1, 0}};
  unsigned seed = 100;
  for (const auto& q : geoms) {
    Conv2dGeom g{q[0], q[1], q[2], q[3], q[4], q[4], q[5], q[5], q[6], q[6]};
    const int64_t OH = g.OH(), OW = g.OW(), L = g.N * OH * OW, rows = g.C * g.kh * g.kw;
    INFO("geom N" << g.N << " C" << g.C << " " << g.H << "x" << g.W << " k" << g.kh << " s" << g.sh << " p" << g.ph);
    std::mt19937 rng(seed++);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> xv(g.N * g.C * g.H * g.W), cv(rows * L);
    for (auto& v : xv) v = u(rng);
    for (auto& v : cv) v = u(rng);
    // im2col
    Tensor x = Tensor::from_vector<float>(xv, {g.N, g.C, g.H, g.W});
    Tensor cols = Tensor::empty({rows, L});
    cpu_backend().im2col(cols.desc(), x.desc(), g);
    const float* pc = static_cast<const float*>(cols.desc().data);
    int bad = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = r / (g.kh * g.kw), i = (r / g.kw) % g.kh, j = r % g.kw;
      for (int64_t n = 0; n < g.N; ++n)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t h = oh * g.sh - g.ph + i, w = ow * g.sw - g.pw + j;
            const float want = (h >= 0 && h < g.H && w >= 0 && w < g.W) ? xv[((n * g.C + c) * g.H + h) * g.W + w] : 0.f;
            bad += !same_bits(pc[r * L + (n * OH + oh) * OW + ow], want);
          }
    }
    CHECK(bad == 0);
    // col2im into a zeroed input gradient: terms added in (i, j) order per element
    std::vector<float> ref(xv.size(), 0.f);
    for (int64_t c = 0; c < g.C; ++c)
      for (int64_t i = 0; i < g.kh; ++i)
        for (int64_t j = 0; j < g.kw; ++j)
          for (int64_t n = 0; n < g.N; ++n)
            for (int64_t oh = 0; oh < OH; ++oh)
              for (int64_t ow = 0; ow < OW; ++ow) {
                const int64_t h = oh * g.sh - g.ph + i, w = ow * g.sw - g.pw + j;
                if (h >= 0 && h < g.H && w >= 0 && w < g.W)
                  ref[((n * g.C + c) * g.H + h) * g.W + w] += cv[((c * g.kh + i) * g.kw + j) * L + (n * OH + oh) * OW + ow];
              }
    Tensor gx = Tensor::zeros({g.N, g.C, g.H, g.W});
    Tensor ct = Tensor::from_vector<float>(cv, {rows, L});
    cpu_backend().col2im(gx.desc(), ct.desc(), g);
    const float* pg = static_cast<const float*>(gx.desc().data);
    bad = 0;
    for (size_t k = 0; k < ref.size(); ++k) bad += !same_bits(pg[k], ref[k]);
    CHECK(bad == 0);
  }
}
