// The CPU allocator refuses a tensor larger than the machine's free memory with an error naming the sizes and
// the fix (before, an absurd model allocated its untouched pages and was OOM-killed while initialising them),
// and the allocator still serves ordinary tensors afterwards.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "tensor/ops.h"
#include "tensor/tensor.h"

using nl::Tensor;

TEST_CASE("cpu allocator: a tensor beyond the free memory is refused with the sizes and the fix", "[backends][memory]") {
  const int64_t n = int64_t(1) << 40;  // 4 TiB of float32: more than any machine this runs on has free
  try {
    Tensor t = Tensor::empty({n});
    FAIL("a 4 TiB tensor was allocated");
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK(m.find("out of memory on cpu: a tensor of 4096.0 GiB would bring normlab's tensors to") != std::string::npos);
    CHECK(m.find("GiB this process can use on this machine") != std::string::npos);
    CHECK(m.find("--d-model") != std::string::npos);
  }
  Tensor ok = Tensor::full({int64_t(1) << 24}, 2.0f);  // 64 MiB: checked against free memory, and fits
  CHECK(nl::sum(ok).item() == Approx(2.0 * (1 << 24)));
}
