// Sums and means over dims that are not one flat run in memory (the per-channel sums over N, H, W of
// a norm's gain/bias gradient on images): the CPU kernel walks contiguous blocks of them; checked
// against plain loops on integer-valued data, where every sum is exact.
#include <catch2/catch.hpp>

#include <array>
#include <set>
#include <vector>

#include "tensor/ops.h"

using namespace nl;

namespace {
// Sum of x [A, B, C, D] over the dims in `dims`, by four nested loops, in row-major order of the rest.
std::vector<double> loop_sum(const std::vector<double>& x, const std::array<int64_t, 4>& s, const std::set<int>& dims) {
  std::array<int64_t, 4> os;
  for (int d = 0; d < 4; ++d) os[d] = dims.count(d) ? 1 : s[d];
  std::vector<double> out(os[0] * os[1] * os[2] * os[3], 0.0);
  for (int64_t a = 0; a < s[0]; ++a)
    for (int64_t b = 0; b < s[1]; ++b)
      for (int64_t c = 0; c < s[2]; ++c)
        for (int64_t d = 0; d < s[3]; ++d) {
          const std::array<int64_t, 4> i{a, b, c, d};
          int64_t o = 0;
          for (int k = 0; k < 4; ++k) o = o * os[k] + (dims.count(k) ? 0 : i[k]);
          out[o] += x[((a * s[1] + b) * s[2] + c) * s[3] + d];
        }
  return out;
}
}  // namespace

TEST_CASE("tensor: sums over non-contiguous dims of images match plain loops", "[tensor][reduce]") {
  const std::array<int64_t, 4> s{5, 3, 4, 6};  // N, C, H, W
  std::vector<double> x(5 * 3 * 4 * 6);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (double)((i * 37) % 23) - 11.0;
  for (DType dt : {DType::Float64, DType::Float32}) {
    const Tensor t = Tensor::from_vector<double>(x, {5, 3, 4, 6}).to(dt);
    for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{0, 2, 3}, {0, 2}, {0, 3}, {1, 3}, {0, 1, 3}}) {
      const std::set<int> ds(dims.begin(), dims.end());
      INFO("dims " << dims.size() << " first " << dims[0] << " dtype " << (dt == DType::Float64 ? "f64" : "f32"));
      const std::vector<double> want = loop_sum(x, s, ds);
      CHECK(sum(t, dims, true).to_vector<double>() == want);
      double count = 1;
      for (int d : ds) count *= (double)s[(size_t)d];
      const std::vector<double> m = mean(t, dims, true).to_vector<double>();
      REQUIRE(m.size() == want.size());
      for (size_t i = 0; i < m.size(); ++i) CHECK(m[i] == Approx(want[i] / count).epsilon(1e-6));
    }
  }
  // The same sums of a permuted view (the channel-last layout lng's rows come from).
  const Tensor p = Tensor::from_vector<double>(x, {5, 3, 4, 6}).permute({0, 2, 3, 1});  // [N, H, W, C]
  CHECK(sum(p, {0, 1, 2}).to_vector<double>() == loop_sum(x, s, {0, 2, 3}));
}
