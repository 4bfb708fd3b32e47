// The CUDA backend's runtime behaviour: the caching allocator stops calling cudaMalloc after warm-up,
// an index out of range found by a kernel is thrown at the next synchronisation naming the op, and an
// op mixing devices is a clear error.
#include <stdexcept>

#include "autograd/functions.h"
#include "backends/cuda_test_util.h"
#ifdef NORMLAB_WITH_CUDA
#include "backends/cuda/cuda_entry.h"
#endif

using namespace nl;
using nltest::kGpu;
using Catch::Contains;

#ifdef NORMLAB_WITH_CUDA
TEST_CASE("the caching allocator reuses blocks (cudaMalloc count flat over 100 steps)", "[cuda]") {
  Variable w(Tensor::randn({64, 32}, 0, 0.1, DType::Float32, kGpu), true);
  Tensor x = Tensor::randn({16, 64}, 0, 1, DType::Float32, kGpu);
  auto step = [&] {
    w.zero_grad();
    Variable y = layer_norm_fused(tanh(matmul(Variable(x), w)), LayerNormOptions{});
    sum(y * y).backward();
    backend_for(DeviceType::CUDA).synchronize(0);
  };
  step();
  step();
  const uint64_t warm = cuda::allocator_stats(0).malloc_calls;
  for (int i = 0; i < 100; ++i) step();
  CHECK(cuda::allocator_stats(0).malloc_calls == warm);
  CHECK(backend_for(DeviceType::CUDA).bytes_cached() >= cuda::allocator_stats(0).bytes_in_use);
  CHECK(cuda::allocator_stats(0).bytes_cached > 0);
}
#endif

TEST_CASE("an index out of range is reported at the next synchronisation with the op name", "[cuda]") {
  Tensor table = Tensor::randn({5, 3}, 0, 1, DType::Float32, kGpu);
  Tensor ids = Tensor::from_vector<int64_t>({1, 7}, {2}).to(kGpu);
  CHECK_THROWS_WITH(
      [&] {
        Tensor e = embedding(table, ids);
        backend_for(DeviceType::CUDA).synchronize(0);
      }(),
      Contains("index_select_rows") && Contains("index 7"));
  CHECK_NOTHROW(backend_for(DeviceType::CUDA).synchronize(0));  // reported once, then cleared
  Tensor x = Tensor::randn({2, 4}, 0, 1, DType::Float32, kGpu);
  Tensor bad = Tensor::from_vector<int64_t>({0, 4}, {2, 1}).to(kGpu);
  CHECK_THROWS_WITH(gather(x, 1, bad).to_vector<float>(), Contains("gather_rows") && Contains("index 4"));
}

TEST_CASE("an op mixing devices is a clear error", "[cuda]") {
  Tensor c = Tensor::ones({2, 2}), g = Tensor::ones({2, 2}, DType::Float32, kGpu);
  CHECK_THROWS_WITH(add(c, g), Contains("different devices") && Contains("cuda:0"));
  CHECK_THROWS_WITH(matmul(c, g), Contains("different devices"));
  CHECK_THROWS_WITH(Tensor(c).copy_(g), Contains("cuda:0"));
  CHECK_THROWS_WITH(check_device(Device::cuda(device_count(DeviceType::CUDA))), Contains("does not exist"));
}
