// CIFAR-10 binary reader: the real batches of ../shared/data/cifar10 against SOURCE.md (skipped when
// absent), generated tiny and corrupt batch files in a temporary folder.
#include <catch2/catch.hpp>

#include <zlib.h>

#include <algorithm>
#include <numeric>

#include "../data_text/temp_dir.h"
#include "data/cifar10.h"
#include "test_paths.h"

using namespace nl;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
std::vector<int64_t> class_counts(const std::vector<uint8_t>& labels) {
  std::vector<int64_t> c(10, 0);
  for (uint8_t y : labels) ++c[y];
  return c;
}
std::vector<int64_t> class_counts(const Tensor& labels) {
  std::vector<int64_t> c(10, 0);
  for (int64_t y : labels.contiguous().to_vector<int64_t>()) ++c[y];
  return c;
}

// `n` records; record i has label labels[i % size]; pixel k of channel c is (7 i + k + 50 c) % 256.
std::string records(int n, const std::vector<uint8_t>& labels) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += char(labels[i % labels.size()]);
    for (int j = 0; j < 3072; ++j) s += char((i * 7 + j % 1024 + 50 * (j / 1024)) % 256);
  }
  return s;
}
void write_gz(const fs::path& p, const std::string& s) {
  gzFile f = gzopen(p.c_str(), "wb");
  REQUIRE(f);
  REQUIRE(gzwrite(f, s.data(), (unsigned)s.size()) == (int)s.size());
  gzclose(f);
}
// A folder with five training batches of `per` records and a test batch of `per` records.
void tiny_folder(const fs::path& dir, int per) {
  for (int b = 1; b <= 5; ++b) write_gz(dir / ("data_batch_" + std::to_string(b) + ".bin.gz"), records(per, {uint8_t(b), 0, 9}));
  write_gz(dir / "test_batch.bin.gz", records(per, {3}));
}
}  // namespace

TEST_CASE("cifar10: the real batches have SOURCE.md's class counts and first ten labels", "[cifar10][data]") {
  const fs::path dir = nltest::data_path("cifar10");
  NL_SKIP_IF_MISSING(dir / "data_batch_1.bin.gz");
  const std::vector<std::vector<int64_t>> want = {{1005, 974, 1032, 1016, 999, 937, 1030, 1001, 1025, 981},
                                                  {984, 1007, 1010, 995, 1010, 988, 1008, 1026, 987, 985},
                                                  {994, 1042, 965, 997, 990, 1029, 978, 1015, 961, 1029},
                                                  {1003, 963, 1041, 976, 1004, 1021, 1004, 981, 1024, 983},
                                                  {1014, 1014, 952, 1016, 997, 1025, 980, 977, 1003, 1022}};
  for (int b = 1; b <= 5; ++b) {
    INFO("data_batch_" << b);
    Cifar10Batch x = read_cifar10_batch(dir / ("data_batch_" + std::to_string(b) + ".bin.gz"));
    CHECK(x.count == 10000);
    CHECK(class_counts(x.labels) == want[b - 1]);
    if (b == 1) CHECK(std::vector<uint8_t>(x.labels.begin(), x.labels.begin() + 10) == std::vector<uint8_t>{6, 9, 9, 4, 1, 1, 2, 7, 8, 3});
  }
  Cifar10Batch t = read_cifar10_batch(dir / "test_batch.bin.gz");
  CHECK(t.count == 10000);
  CHECK(class_counts(t.labels) == std::vector<int64_t>(10, 1000));
  CHECK(std::vector<uint8_t>(t.labels.begin(), t.labels.begin() + 10) == std::vector<uint8_t>{3, 8, 8, 0, 6, 6, 1, 6, 3, 1});
}

TEST_CASE("cifar10: the real 45000/5000 split keeps every image once and 5000 per class", "[cifar10][data]") {
  const fs::path dir = nltest::data_path("cifar10");
  NL_SKIP_IF_MISSING(dir / "data_batch_5.bin.gz");
  Cifar10Options o;
  o.normalize = false;
  o.split_seed = 7;
  Cifar10Splits s = load_cifar10(dir, o);
  REQUIRE(s.train.size() == 45000);
  REQUIRE(s.valid.size() == 5000);
  REQUIRE(s.test.size() == 10000);
  std::vector<int64_t> c = class_counts(s.train.labels), v = class_counts(s.valid.labels);
  for (int k = 0; k < 10; ++k) CHECK(c[k] + v[k] == 5000);
  CHECK(std::is_sorted(s.valid_indices.begin(), s.valid_indices.end()));
  // The first training image (index 0, a frog) stays first unless held out.
  if (s.valid_indices.front() != 0) CHECK(s.train.labels.to_vector<int64_t>()[0] == 6);
}

TEST_CASE("cifar10: batch choice, seeded split, train limit, grayscale and normalisation", "[cifar10][data]") {
  nltest::TempDir d("cifar10_tiny");
  tiny_folder(d.path, 20);
  Cifar10Options o;
  o.batch_records = 20;  // the real files hold 10,000
  o.batches = {2, 4};
  o.valid_size = 5;
  o.split_seed = 3;
  Cifar10Splits s = load_cifar10(d.path, o);
  CHECK(s.batches == std::vector<int>{2, 4});
  CHECK(s.train.size() == 35);
  CHECK(s.valid.size() == 5);
  CHECK(s.test.size() == 20);
  CHECK(s.train.images.shape() == Shape{35, 3, 32, 32});
  // Labels of batch 2 are {2, 0, 9} repeating, of batch 4 {4, 0, 9}: nothing from batches 1, 3, 5.
  const auto cnt = class_counts(s.train.labels), cv = class_counts(s.valid.labels);
  CHECK(cnt[1] + cv[1] == 0);
  CHECK(cnt[2] + cv[2] == 7);
  CHECK(cnt[4] + cv[4] == 7);
  // Per-channel mean 0 and std 1 on train after normalisation.
  REQUIRE(s.mean.size() == 3);
  const auto x = s.train.images.to_vector<float>();
  for (int ch = 0; ch < 3; ++ch) {
    double m = 0, m2 = 0;
    for (int i = 0; i < 35; ++i)
      for (int k = 0; k < 1024; ++k) {
        const double v = x[(i * 3 + ch) * 1024 + k];
        m += v, m2 += v * v;
      }
    m /= 35 * 1024;
    CHECK(m == Approx(0).margin(1e-5));
    CHECK(m2 / (35 * 1024) - m * m == Approx(1).epsilon(1e-4));
  }
  // Same seed, same split; another seed, another split.
  CHECK(load_cifar10(d.path, o).valid_indices == s.valid_indices);
  o.split_seed = 4;
  CHECK(load_cifar10(d.path, o).valid_indices != s.valid_indices);
  // Train limit and grayscale (luma of the raw pixels without normalisation).
  o.train_limit = 10;
  o.grayscale = true;
  o.normalize = false;
  o.valid_size = 0;
  o.batches = {1};
  Cifar10Splits g = load_cifar10(d.path, o);
  REQUIRE(g.train.images.shape() == Shape{10, 1, 32, 32});
  CHECK(g.valid.size() == 0);
  const float want = 0.299f * 0 / 255.0f + 0.587f * 50 / 255.0f + 0.114f * 100 / 255.0f;  // record 0, pixel 0
  CHECK(g.train.images.to_vector<float>()[0] == Approx(want).epsilon(1e-6));
}

TEST_CASE("cifar10: corrupt batch files give errors naming the problem", "[cifar10][data]") {
  nltest::TempDir d("cifar10_bad");
  const fs::path p = d.path / "data_batch_1.bin.gz";
  SECTION("wrong record size") {
    write_gz(p, records(2, {1}) + "12345");
    REQUIRE_THROWS_WITH(read_cifar10_batch(p), Contains("not a whole number of 3073-byte records") &&
                                                   Contains("2 records and 5 bytes left over") && Contains("data_batch_1"));
  }
  SECTION("CIFAR-100 records") {
    std::string s;
    for (int i = 0; i < 3; ++i) s += std::string(3074, char(1));  // 3 records of 3074 bytes
    write_gz(p, s);
    REQUIRE_THROWS_WITH(read_cifar10_batch(p), Contains("CIFAR-100"));
  }
  SECTION("label out of range") {
    write_gz(p, records(3, {1, 10}));
    REQUIRE_THROWS_WITH(read_cifar10_batch(p, 3), Contains("record 1") && Contains("label 10, outside 0..9"));
  }
  SECTION("empty") {
    write_gz(p, "");
    REQUIRE_THROWS_WITH(read_cifar10_batch(p), Contains("is empty"));
  }
  SECTION("truncated gzip") {
    write_gz(p, records(3, {1}));
    REQUIRE(read_cifar10_batch(p, 3).count == 3);
    std::string bytes;
    {
      std::ifstream f(p, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(f), {});
    }
    d.write("data_batch_1.bin.gz", bytes.substr(0, bytes.size() / 2));
    REQUIRE_THROWS_WITH(read_cifar10_batch(p, 3), Contains("gzip"));
  }
  SECTION("missing folder and files") {
    REQUIRE_THROWS_WITH(load_cifar10(d.path / "nope"), Contains("does not exist") && Contains("--data"));
    REQUIRE_THROWS_WITH(load_cifar10(d.path), Contains("lacks data_batch_1.bin.gz"));
  }
  SECTION("bad options") {
    tiny_folder(d.path, 4);
    Cifar10Options o;
    o.batch_records = 4;
    o.batches = {6};
    REQUIRE_THROWS_WITH(load_cifar10(d.path, o), Contains("batch 6 does not exist"));
    o.batches = {1, 1};
    REQUIRE_THROWS_WITH(load_cifar10(d.path, o), Contains("listed twice"));
    o.batches = {1};
    o.valid_size = 4;
    REQUIRE_THROWS_WITH(load_cifar10(d.path, o), Contains("valid_size 4 must be in [0, 4)"));
    o.batch_records = 0;
    REQUIRE_THROWS_WITH(load_cifar10(d.path, o), Contains("batch_records must be >= 1"));
  }
  SECTION("a file cut on a record boundary (6 of 10 records)") {
    write_gz(p, records(6, {1}));
    REQUIRE_THROWS_WITH(read_cifar10_batch(p, 10),
                        Contains("data_batch_1.bin.gz") && Contains("holds 18438 bytes (6 records)") &&
                            Contains("10 records of 3073 bytes (30730 bytes)") && Contains("truncated") &&
                            Contains("re-download"));
    // the real layout: 10,000 records per file, so 6,000 is refused by default and through load_cifar10
    REQUIRE_THROWS_WITH(read_cifar10_batch(p), Contains("holds 10000 records of 3073 bytes (30730000 bytes)"));
    tiny_folder(d.path, 4);
    write_gz(d.path / "data_batch_1.bin.gz", records(3, {1}));
    Cifar10Options o;
    o.batch_records = 4;
    o.valid_size = 1;
    REQUIRE_THROWS_WITH(load_cifar10(d.path, o), Contains("data_batch_1.bin.gz") && Contains("(3 records)"));
  }
}
