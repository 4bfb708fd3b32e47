// The weight-cast cache of mixed precision (tensor/cast_cache.h): one bfloat16 copy per weight version.
#include <catch2/catch.hpp>

#include "tensor/cast_cache.h"
#include "tensor/ops.h"

using namespace nl;

TEST_CASE("cast cache: a weight is cast once per version and re-cast after an in-place update", "[bf16][tensor]") {
  clear_cast_cache();
  manual_seed(7);
  Tensor w = Tensor::randn({16, 8});
  const size_t casts0 = cast_cache_stats().casts;
  const Tensor c1 = cached_cast(w, DType::BFloat16);
  const Tensor c2 = cached_cast(w, DType::BFloat16);
  CHECK(c1.dtype() == DType::BFloat16);
  CHECK(c1.is_alias_of(c2));  // the second use reads the same copy
  CHECK(cast_cache_stats().casts == casts0 + 1);
  CHECK(cast_cache_stats().entries == 1);
  CHECK(cast_cache_stats().bytes == 16 * 8 * 2);
  CHECK(c1.to_vector<float>() == w.to(DType::BFloat16).to_vector<float>());

  // An optimizer step writes the weight in place (and bumps its version): the next use re-casts.
  w.copy_(w * 2.0);
  const Tensor c3 = cached_cast(w, DType::BFloat16);
  CHECK_FALSE(c3.is_alias_of(c1));
  CHECK(c3.to_vector<float>() == w.to(DType::BFloat16).to_vector<float>());
  CHECK(cast_cache_stats().casts == casts0 + 2);
  CHECK(cast_cache_stats().entries == 1);  // the stale copy was replaced, not kept beside the new one

  // Views of one storage are separate weights; the tensor's own dtype needs no copy.
  const Tensor row = cached_cast(w.slice(0, 2, 4), DType::BFloat16);
  CHECK(row.shape() == Shape{2, 8});
  CHECK(row.to_vector<float>() == w.slice(0, 2, 4).to(DType::BFloat16).to_vector<float>());
  CHECK(cast_cache_stats().entries == 2);
  CHECK(cached_cast(w, DType::Float32).is_alias_of(w));

  // A freed weight's copy is dropped at the next insertion (a new storage may reuse its address).
  w = Tensor();
  Tensor other = Tensor::ones({3});
  cached_cast(other, DType::BFloat16);
  CHECK(cast_cache_stats().entries == 1);
  clear_cast_cache();
  CHECK(cast_cache_stats().entries == 0);
  CHECK_THROWS_AS(cached_cast(Tensor(), DType::BFloat16), std::invalid_argument);
}
