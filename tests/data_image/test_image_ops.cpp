// Image-set operations: subsets, random labels, grayscale, per-channel normalisation, crop + flip.
#include <catch2/catch.hpp>

#include <algorithm>

#include "data/image_ops.h"

using namespace nl;
using Catch::Matchers::Contains;

namespace {
// n images of C×2×3; pixel value = 100 i + 10 c + k (k = 0..5 row-major); label = i % 10.
ImageDataset toy(int64_t n, int64_t c) {
  std::vector<float> px;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch)
      for (int k = 0; k < 6; ++k) px.push_back(float(100 * i + 10 * ch + k));
    y.push_back(i % 10);
  }
  return {Tensor::from_vector(px, {n, c, 2, 3}), Tensor::from_vector(y, {n}), "toy"};
}
}  // namespace

TEST_CASE("image ops: take_first and take_rows", "[image_ops][data]") {
  ImageDataset d = toy(5, 1);
  ImageDataset f = take_first(d, 2);
  CHECK(f.size() == 2);
  CHECK(f.labels.to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  REQUIRE_THROWS_WITH(take_first(d, 6), Contains("cannot take 6 images") && Contains("from 1 to 5"));
  ImageDataset r = take_rows(d, {4, 1});
  CHECK(r.labels.to_vector<int64_t>() == std::vector<int64_t>{4, 1});
  CHECK(r.images.to_vector<float>()[0] == 400.0f);
  REQUIRE_THROWS_AS(take_rows(d, {5}), std::out_of_range);
}

TEST_CASE("image ops: random labels are a seeded permutation of the labels", "[image_ops][data]") {
  ImageDataset d = toy(200, 1);
  ImageDataset a = permute_labels(d, 11), b = permute_labels(d, 11), c = permute_labels(d, 12), v = permute_labels(d, 11, 1);
  auto la = a.labels.to_vector<int64_t>(), lo = d.labels.to_vector<int64_t>();
  CHECK(la == b.labels.to_vector<int64_t>());
  CHECK(la != c.labels.to_vector<int64_t>());
  CHECK(la != v.labels.to_vector<int64_t>());
  CHECK(la != lo);
  // Same multiset of labels (class counts kept), images untouched.
  auto sa = la, so = lo;
  std::sort(sa.begin(), sa.end());
  std::sort(so.begin(), so.end());
  CHECK(sa == so);
  CHECK(a.images.is_alias_of(d.images));
  // Random: about 1 in 10 labels agrees with the original.
  int64_t same = 0;
  for (size_t i = 0; i < la.size(); ++i) same += la[i] == lo[i];
  CHECK(same < 50);
}

TEST_CASE("image ops: grayscale is BT.601 luma", "[image_ops][data]") {
  ImageDataset g = to_grayscale(toy(2, 3));
  REQUIRE(g.images.shape() == Shape{2, 1, 2, 3});
  // image 1, pixel 2: R 102, G 112, B 122.
  CHECK(g.images.to_vector<float>()[6 + 2] == Approx(0.299 * 102 + 0.587 * 112 + 0.114 * 122));
  const ImageDataset one = toy(2, 1);
  CHECK(to_grayscale(one).images.is_alias_of(one.images));  // one channel: returned as is
  REQUIRE_THROWS_WITH(to_grayscale(toy(1, 2)), Contains("2 channels"));
}

TEST_CASE("image ops: per-channel statistics and normalisation", "[image_ops][data]") {
  ImageDataset d = toy(2, 2);
  std::vector<double> m, s;
  channel_stats(d, m, s);
  // channel 0 values: 0..5 and 100..105 -> mean 52.5; var = 50^2 + var(0..5) = 2500 + 35/12.
  CHECK(m[0] == Approx(52.5));
  CHECK(m[1] == Approx(62.5));
  CHECK(s[0] == Approx(std::sqrt(2500 + 35.0 / 12)));
  ImageDataset n = normalize_channels(d, m, s);
  CHECK(n.images.to_vector<float>()[0] == Approx(-52.5 / s[0]));
  CHECK(d.images.to_vector<float>()[0] == 0.0f);  // the input is not changed
  REQUIRE_THROWS_WITH(normalize_channels(d, {0.0}, {1.0}), Contains("2 channels but 1 means"));
  REQUIRE_THROWS_WITH(normalize_channels(d, {0, 0}, {1, 0}), Contains("std of channel 1"));
}

TEST_CASE("image ops: random crop and flip", "[image_ops][data]") {
  const Tensor x = toy(64, 1).images;  // [64, 1, 2, 3]
  const Tensor a = random_crop_flip(x, 1, 5, 0, 0);
  CHECK(a.to_vector<float>() == random_crop_flip(x, 1, 5, 0, 0).to_vector<float>());
  CHECK(a.to_vector<float>() != random_crop_flip(x, 1, 5, 1, 0).to_vector<float>());
  // pad 0: every image is itself or its mirror, and both occur.
  const auto f = random_crop_flip(x, 0, 5, 0, 0).to_vector<float>(), o = x.to_vector<float>();
  int flipped = 0, kept = 0;
  for (int i = 0; i < 64; ++i) {
    const float* p = o.data() + i * 6;
    const float* q = f.data() + i * 6;
    const bool same = std::equal(p, p + 6, q);
    const bool mirror = q[0] == p[2] && q[1] == p[1] && q[2] == p[0] && q[3] == p[5] && q[4] == p[4] && q[5] == p[3];
    CHECK((same || mirror));
    kept += same, flipped += mirror;
  }
  CHECK(kept > 10);
  CHECK(flipped > 10);
  // pad 1: every output value is 0 (padding) or a pixel of the same image.
  const auto c = a.to_vector<float>();
  int zeros = 0;
  for (int i = 0; i < 64; ++i)
    for (int k = 0; k < 6; ++k) {
      const float v = c[i * 6 + k];
      if (v == 0 && i > 0) ++zeros;
      CHECK((v == 0 || (v >= 100 * i && v <= 100 * i + 5)));
    }
  CHECK(zeros > 0);
  REQUIRE_THROWS_WITH(random_crop_flip(x, -1, 0, 0, 0), Contains("pad must be >= 0"));
}
