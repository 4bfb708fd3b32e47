// IDX reader and MNIST-like loading: real Fashion-MNIST / MNIST files (skipped when absent) and
// generated corrupt files in a temporary folder.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "data/idx.h"
#include "data/image_dataset.h"
#include "test_paths.h"

using namespace nl;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
const fs::path kFashion = "/usr/share/datasets/fashion-mnist";

struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("normlab_idx_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string be32(uint32_t v) { return {char(v >> 24), char(v >> 16 & 0xff), char(v >> 8 & 0xff), char(v & 0xff)}; }

std::string idx3(uint32_t n, uint32_t r, uint32_t c, uint8_t fill = 7) {
  return be32(0x803) + be32(n) + be32(r) + be32(c) + std::string(n * r * c, char(fill));
}
std::string idx1(const std::vector<uint8_t>& labels) {
  return be32(0x801) + be32((uint32_t)labels.size()) + std::string(labels.begin(), labels.end());
}
void write_plain(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(s.data(), (std::streamsize)s.size());
}
void write_gz(const fs::path& p, const std::string& s) {
  gzFile f = gzopen(p.c_str(), "wb");
  REQUIRE(f);
  REQUIRE(gzwrite(f, s.data(), (unsigned)s.size()) == (int)s.size());
  gzclose(f);
}
std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

std::vector<int64_t> class_counts(const Tensor& labels) {
  std::vector<int64_t> c(10, 0);
  for (int64_t y : labels.to_vector<int64_t>()) c.at(y)++;
  return c;
}

void check_splits(const MnistLikeSplits& s) {
  CHECK(s.train.size() == 55000);
  CHECK(s.valid.size() == 5000);
  CHECK(s.test.size() == 10000);
  CHECK(s.train.images.shape() == Shape{55000, 1, 28, 28});
  CHECK(s.valid.images.shape() == Shape{5000, 1, 28, 28});
  CHECK(s.test.images.shape() == Shape{10000, 1, 28, 28});
  CHECK(s.train.images.dtype() == DType::Float32);
  CHECK(s.test.labels.dtype() == DType::Int64);
  for (const ImageDataset* d : {&s.train, &s.valid, &s.test}) {
    auto y = d->labels.to_vector<int64_t>();
    CHECK(*std::min_element(y.begin(), y.end()) == 0);
    CHECK(*std::max_element(y.begin(), y.end()) == 9);
  }
  auto x = s.test.images.to_vector<float>();
  CHECK(*std::min_element(x.begin(), x.end()) == 0.0f);
  CHECK(*std::max_element(x.begin(), x.end()) == 1.0f);
}
}  // namespace

TEST_CASE("idx: real Fashion-MNIST files load with the paper's split", "[data][idx]") {
  NL_SKIP_IF_MISSING(kFashion);
  IdxImages img = read_idx_images(kFashion / "train-images-idx3-ubyte.gz");
  CHECK(img.count == 60000);
  CHECK(img.rows == 28);
  CHECK(img.cols == 28);
  CHECK(img.pixels.size() == 60000u * 784u);
  auto train_labels = read_idx_labels(kFashion / "train-labels-idx1-ubyte.gz");
  CHECK(train_labels.size() == 60000);
  CHECK(read_idx_labels(kFashion / "t10k-labels-idx1-ubyte.gz").size() == 10000);

  MnistLikeSplits s = load_mnist_like(kFashion);
  check_splits(s);
  // Fashion-MNIST is balanced: 6,000 per class in the training file, 1,000 in the test file.
  CHECK(class_counts(s.test.labels) == std::vector<int64_t>(10, 1000));
  auto tr = class_counts(s.train.labels), va = class_counts(s.valid.labels);
  for (int k = 0; k < 10; ++k) CHECK(tr[k] + va[k] == 6000);
  // Validation is the LAST 5,000 images of the training file, in file order; pixels scaled by 1/255.
  auto vy = s.valid.labels.to_vector<int64_t>();
  for (int i = 0; i < 5000; i += 499) CHECK(vy[i] == train_labels[55000 + i]);
  const int64_t j = 57123;
  CHECK(s.valid.images.select(0, j - 55000).to_vector<float>()[400] == img.pixels[j * 784 + 400] / 255.0f);
  CHECK(s.train.images.select(0, 42).to_vector<float>()[300] == img.pixels[42 * 784 + 300] / 255.0f);
}

TEST_CASE("idx: original MNIST from shared data loads with the paper's split", "[data][idx]") {
  const fs::path dir = nltest::data_path("mnist");
  NL_SKIP_IF_MISSING(dir);
  MnistLikeSplits s = load_mnist_like(dir);
  check_splits(s);
  // Class counts recorded in shared/data/mnist/SOURCE.md.
  CHECK(class_counts(s.test.labels) == std::vector<int64_t>{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009});
  auto tr = class_counts(s.train.labels), va = class_counts(s.valid.labels);
  const std::vector<int64_t> full = {5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949};
  for (int k = 0; k < 10; ++k) CHECK(tr[k] + va[k] == full[k]);
}

TEST_CASE("idx: normalisation option and custom validation size", "[data][idx]") {
  TempDir d;
  write_gz(d.path / "train-images-idx3-ubyte.gz", idx3(10, 28, 28, 51));  // 51/255 = 0.2
  write_gz(d.path / "train-labels-idx1-ubyte.gz", idx1({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  write_plain(d.path / "t10k-images-idx3-ubyte", idx3(2, 28, 28, 255));  // plain files are found too
  write_plain(d.path / "t10k-labels-idx1-ubyte", idx1({3, 4}));
  MnistLikeSplits s = load_mnist_like(d.path, MnistLikeOptions{.valid_size = 3});
  CHECK(s.train.size() == 7);
  CHECK(s.valid.labels.to_vector<int64_t>() == std::vector<int64_t>{7, 8, 9});
  CHECK(s.train.images.to_vector<float>()[5] == Approx(0.2f));
  CHECK(s.test.images.to_vector<float>()[0] == 1.0f);
  MnistLikeSplits n = load_mnist_like(d.path, MnistLikeOptions{.valid_size = 3, .normalize = true});
  CHECK(n.train.images.to_vector<float>()[5] == Approx((0.2 - 0.1307) / 0.3081).epsilon(1e-6));
  CHECK_THROWS_WITH(load_mnist_like(d.path, MnistLikeOptions{.valid_size = 10}), Contains("valid_size 10 must be in [0, 10)"));
}

TEST_CASE("idx: a training file too small for valid_size names the folder, its image count and the fix", "[data][idx]") {
  TempDir d;
  write_gz(d.path / "train-images-idx3-ubyte.gz", idx3(10, 28, 28, 51));
  write_gz(d.path / "train-labels-idx1-ubyte.gz", idx1({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  write_gz(d.path / "t10k-images-idx3-ubyte.gz", idx3(2, 28, 28, 255));
  write_gz(d.path / "t10k-labels-idx1-ubyte.gz", idx1({3, 4}));
  // `train mnist` holds out a fixed 5000 (no flag): the fix is a full training set.
  CHECK_THROWS_WITH(load_mnist_like(d.path),
                    Contains("data folder '" + d.path.string() + "': train-images-idx3-ubyte.gz holds 10 training images") &&
                        Contains("too few to hold out 5000 for validation") &&
                        Contains("holds out a fixed 5000: pass --data with a full training set"));
  // Image tasks set valid_size with --valid-size: that flag is suggested too.
  CHECK_THROWS_WITH(load_mnist_like(d.path, MnistLikeOptions{.valid_size = 5000, .valid_size_flag = "--valid-size"}),
                    Contains("pass --valid-size below 10 or --data with a full training set"));
  CHECK_THROWS_WITH(load_mnist_like(d.path, MnistLikeOptions{.valid_size = -1}), Contains("valid_size must be >= 0"));
}

TEST_CASE("idx: truncated, corrupt, wrong-magic and out-of-range files give clear errors", "[data][idx]") {
  TempDir d;
  const fs::path p = d.path / "x-idx3-ubyte";
  write_plain(p, idx3(3, 2, 2));
  CHECK(read_idx_images(p).count == 3);

  write_plain(p, idx3(3, 2, 2).substr(0, 22));
  CHECK_THAT(error_of([&] { read_idx_images(p); }),
             Contains("IDX file '" + p.string() + "'") && Contains("truncated: expected 28 bytes") &&
                 Contains("got 22"));
  write_plain(p, idx3(3, 2, 2).substr(0, 10));
  CHECK_THAT(error_of([&] { read_idx_images(p); }), Contains("truncated: expected at least 16 header bytes, got 10"));
  write_plain(p, idx3(3, 2, 2) + "junk");
  CHECK_THAT(error_of([&] { read_idx_images(p); }), Contains("4 unexpected trailing bytes"));
  write_plain(p, idx1({1, 2, 3}));
  CHECK_THAT(error_of([&] { read_idx_images(p); }),
             Contains("wrong magic number 0x00000801") && Contains("label file") && Contains("expected 0x00000803"));
  write_plain(p, "\x89PNG\r\n\x1a\n-not-idx-at-all");
  CHECK_THAT(error_of([&] { read_idx_labels(p); }), Contains("wrong magic number 0x89504e47 (not an IDX file)"));
  write_plain(p, be32(0x0D03) + be32(1) + be32(1) + be32(1) + "abcd");
  CHECK_THAT(error_of([&] { read_idx_images(p); }), Contains("element type 0x0d is not unsigned byte"));
  write_plain(p, idx1({1, 12, 3}));
  CHECK_THAT(error_of([&] { read_idx_labels(p); }), Contains("label 12 at index 1 is outside 0..9"));
  write_plain(p, be32(0x803) + be32(0) + be32(28) + be32(28));
  CHECK_THAT(error_of([&] { read_idx_images(p); }), Contains("dimension 0 is 0"));
  write_plain(p, be32(0x803) + be32(0xFFFFFFFF) + be32(0xFFFFFFFF) + be32(0xFFFFFFFF) + "abcd");
  CHECK_THAT(error_of([&] { read_idx_images(p); }), Contains("corrupt header") && Contains("4294967295×4294967295"));
  CHECK_THAT(error_of([&] { read_idx_images(d.path / "nope.gz"); }), Contains("file not found"));
  CHECK_THAT(error_of([&] { read_idx_images(d.path); }), Contains("is a directory"));

  // gzip: cut short, and corrupted in the middle of the compressed stream.
  const fs::path g = d.path / "x-idx3-ubyte.gz";
  std::string big = be32(0x803) + be32(50) + be32(28) + be32(28);
  for (int i = 0; i < 50 * 784; ++i) big += char((i * 131 + i / 7) & 0xff);
  write_gz(g, big);
  CHECK(read_idx_images(g).count == 50);
  const std::string gz = slurp(g);
  write_plain(g, gz.substr(0, gz.size() / 2));
  CHECK_THAT(error_of([&] { read_idx_images(g); }), Contains("IDX file '" + g.string() + "'") && Contains("truncated"));
  std::string bad = gz;
  for (size_t i = bad.size() / 3; i < bad.size() / 3 + 64; ++i) bad[i] = char(bad[i] ^ 0x5a);
  write_plain(g, bad);
  CHECK_THAT(error_of([&] { read_idx_images(g); }), Contains("corrupt"));
}

TEST_CASE("idx: missing folder or files name the expected files and the fix", "[data][idx]") {
  TempDir d;
  CHECK_THAT(error_of([&] { load_mnist_like(d.path / "absent"); }),
             Contains("does not exist") && Contains("train-images-idx3-ubyte.gz") &&
                 Contains("t10k-labels-idx1-ubyte.gz") && Contains("dataset-fashion-mnist") && Contains("--data DIR"));
  write_gz(d.path / "train-images-idx3-ubyte.gz", idx3(10, 28, 28));
  write_gz(d.path / "train-labels-idx1-ubyte.gz", idx1({0, 1, 2, 3, 4, 5, 6, 7, 8}));  // one short
  write_gz(d.path / "t10k-images-idx3-ubyte.gz", idx3(2, 28, 28));
  CHECK_THAT(error_of([&] { load_mnist_like(d.path); }),
             Contains("lacks t10k-labels-idx1-ubyte.gz") && Contains("dataset-fashion-mnist"));
  write_gz(d.path / "t10k-labels-idx1-ubyte.gz", idx1({0, 1}));
  CHECK_THAT(error_of([&] { load_mnist_like(d.path); }), Contains("holds 10 images but train-labels-idx1-ubyte.gz holds 9 labels"));
}

TEST_CASE("idx: dims whose product overflows 64 bits are a corrupt header, not an empty file", "[data][idx][fuzz]") {
  TempDir d;
  const fs::path p = d.path / "wrap-idx3-ubyte";
  // 2^20 · 2^20 · 2^24 = 2^64 wraps to 0 in uint64: a 16-byte file must not "load".
  write_plain(p, be32(0x803) + be32(1u << 20) + be32(1u << 20) + be32(1u << 24));
  CHECK_THAT(error_of([&] { read_idx_images(p); }), Contains("corrupt header") && Contains("1048576×1048576×16777216"));
  // Just under the 1 TiB cap the product is exact and the file is reported as truncated.
  write_plain(p, be32(0x803) + be32(1u << 20) + be32(1u << 10) + be32(1u << 10));
  CHECK_THAT(error_of([&] { read_idx_images(p); }), Contains("truncated: expected 1099511627792 bytes") && Contains("got 16"));
}

TEST_CASE("idx: the header is checked before the gzip stream is inflated", "[data][idx][fuzz]") {
  TempDir d;
  const fs::path g = d.path / "bad-idx3-ubyte.gz";
  // A wrong magic number followed by 4 MiB of incompressible bytes whose compressed form is corrupted
  // near its end: reading the header first reports the magic number, not the far-away gzip damage.
  std::string s = "\x89PNG";
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < (4 << 20); ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s += char(x & 0xff);
  }
  write_gz(g, s);
  std::string gz = slurp(g);
  for (size_t i = gz.size() - 4096; i < gz.size() - 2048; ++i) gz[i] = char(gz[i] ^ 0x5a);
  write_plain(g, gz);
  CHECK_THAT(error_of([&] { read_idx_images(g); }), Contains("wrong magic number 0x89504e47"));
}

TEST_CASE("idx: a gzip bomb is read no further than the header announces", "[data][idx][fuzz]") {
  TempDir d;
  const fs::path g = d.path / "bomb-idx3-ubyte.gz";
  // Header for one 2×2 image, then 8 MiB of zeros (8 KiB compressed): the reader stops counting trailing
  // bytes after 1 MiB instead of inflating (and holding) all of them.
  write_gz(g, be32(0x803) + be32(1) + be32(2) + be32(2) + "abcd" + std::string(8u << 20, '\0'));
  CHECK(fs::file_size(g) < (64u << 10));
  CHECK_THAT(error_of([&] { read_idx_images(g); }),
             Contains("over 1048576 unexpected trailing bytes after the 1×2×2 data") && Contains("expected 20 bytes"));
}

TEST_CASE("idx: images of the wrong size name the size found and the size expected", "[data][idx]") {
  TempDir d;
  write_gz(d.path / "train-images-idx3-ubyte.gz", idx3(10, 32, 32));
  write_gz(d.path / "train-labels-idx1-ubyte.gz", idx1({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  write_gz(d.path / "t10k-images-idx3-ubyte.gz", idx3(2, 28, 28));
  write_gz(d.path / "t10k-labels-idx1-ubyte.gz", idx1({0, 1}));
  CHECK_THAT(error_of([&] { load_mnist_like(d.path, MnistLikeOptions{.valid_size = 2}); }),
             Contains("train-images-idx3-ubyte.gz holds 32×32 images but the model expects 28×28"));
  // With any size allowed, train and test must still agree.
  MnistLikeOptions any{.valid_size = 2, .rows = 0, .cols = 0};
  CHECK_THAT(error_of([&] { load_mnist_like(d.path, any); }),
             Contains("t10k-images-idx3-ubyte.gz holds 28×28 images but the training file holds 32×32"));
  write_gz(d.path / "t10k-images-idx3-ubyte.gz", idx3(2, 32, 32));
  CHECK(load_mnist_like(d.path, any).test.images.shape() == Shape{2, 1, 32, 32});
}
