// The OpenMP-parallel CPU kernels (elementwise, reductions, GEMM, random fills) on tensors large
// enough to be split across threads (>= kParallelGrain elements), against plain reference loops.
// Tagged [threads2]: ctest runs them once with OMP_NUM_THREADS=1 and once more with 2 threads
// (label threads2; tests/CMakeLists.txt), so a race or a wrong split shows up as a mismatch.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>

#include "backends/cpu/threads.h"
#include "tensor/ops.h"

using namespace nl;

namespace {
constexpr int64_t R = 300, C = 257;  // 77,100 elements: above kParallelGrain, odd row length
static_assert(R * C >= 2 * kParallelGrain);

// The thread count ctest asked for is the one in use (so the threads2 run really runs with 2).
void check_threads_from_env() {
  if (const char* e = std::getenv("OMP_NUM_THREADS")) CHECK(get_num_threads() == std::atoi(e));
}
}  // namespace

TEST_CASE("parallel kernels: elementwise unary and broadcast binary match scalar loops exactly",
          "[kernels][threads2]") {
  check_threads_from_env();
  manual_seed(21);
  const Tensor x = Tensor::randn({R, C}, 0, 1, DType::Float64), b = Tensor::randn({C}, 0, 1, DType::Float64);
  const auto xv = x.to_vector<double>(), bv = b.to_vector<double>();
  const auto e = exp(x).to_vector<double>();
  const auto s = add(x, b).to_vector<double>();
  const auto t = mul(x.transpose(0, 1), Tensor::scalar(3.0, DType::Float64)).to_vector<double>();  // strided input
  int64_t bad = 0;
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) {
      bad += e[i * C + j] != std::exp(xv[i * C + j]);
      bad += s[i * C + j] != xv[i * C + j] + bv[j];
      bad += t[j * R + i] != xv[i * C + j] * 3.0;
    }
  CHECK(bad == 0);
}

TEST_CASE("parallel kernels: row and column reductions match double loops", "[kernels][threads2]") {
  check_threads_from_env();
  manual_seed(22);
  const Tensor x = Tensor::randn({R, C}, 0.5, 2, DType::Float64);
  const auto xv = x.to_vector<double>();
  const auto rs = sum(x, {1}).to_vector<double>(), cs = sum(x, {0}).to_vector<double>();
  const auto mx = max(x, 1).to_vector<double>();
  const auto am = argmax(x, 1).to_vector<int64_t>();
  for (int64_t i = 0; i < R; ++i) {
    double acc = 0, best = xv[i * C];
    int64_t bi = 0;
    for (int64_t j = 0; j < C; ++j) {
      acc += xv[i * C + j];
      if (xv[i * C + j] > best) best = xv[i * C + j], bi = j;
    }
    CHECK(rs[i] == Approx(acc).epsilon(1e-12));
    CHECK(mx[i] == best);
    CHECK(am[i] == bi);
  }
  for (int64_t j = 0; j < C; ++j) {
    double acc = 0;
    for (int64_t i = 0; i < R; ++i) acc += xv[i * C + j];
    CHECK(cs[j] == Approx(acc).epsilon(1e-12));
  }
}

TEST_CASE("parallel kernels: GEMM (plain, transposed, batched) matches a triple loop", "[kernels][threads2]") {
  check_threads_from_env();
  manual_seed(23);
  const int64_t M = 96, K = 130, N = 70, B = 3;
  const Tensor a = Tensor::randn({B, M, K}, 0, 1, DType::Float64), bt = Tensor::randn({B, N, K}, 0, 1, DType::Float64);
  const Tensor c = matmul(a, bt.transpose(1, 2));  // [B, M, N], B read transposed in place
  const auto av = a.to_vector<double>(), bv = bt.to_vector<double>(), cv = c.to_vector<double>();
  double worst = 0;
  for (int64_t s = 0; s < B; ++s)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += av[(s * M + i) * K + k] * bv[(s * N + j) * K + k];
        worst = std::max(worst, std::abs(cv[(s * M + i) * N + j] - acc));
      }
  CHECK(worst < 1e-11);
}

TEST_CASE("parallel kernels: random fills are the same for any thread count", "[kernels][threads2]") {
  check_threads_from_env();
  const int threads = get_num_threads();
  manual_seed(24);
  const auto many = Tensor::randn({R, C}, 0, 1, DType::Float64).to_vector<double>();
  set_num_threads(1);
  manual_seed(24);
  const auto one = Tensor::randn({R, C}, 0, 1, DType::Float64).to_vector<double>();
  set_num_threads(threads);
  CHECK(many == one);
}
