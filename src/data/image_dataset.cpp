#include "data/image_dataset.h"

#include <cstring>
#include <random>
#include <stdexcept>

#include "data/idx.h"

namespace nl {

namespace fs = std::filesystem;

std::vector<std::string> mnist_like_files() {
  return {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
          "t10k-labels-idx1-ubyte.gz"};
}

namespace {

const char* kHint =
    "install the Debian package dataset-fashion-mnist (files in /usr/share/datasets/fashion-mnist) "
    "or pass --data DIR pointing to a folder with these MNIST-format IDX files";

std::string expected_list() {
  std::string s;
  for (const auto& f : mnist_like_files()) s += (s.empty() ? "" : ", ") + f;
  return s + " (or the same names without .gz)";
}

// dir/name, or dir/name-without-.gz; empty path when neither exists.
fs::path find_file(const fs::path& dir, const std::string& name) {
  if (fs::exists(dir / name)) return dir / name;
  const std::string plain = name.substr(0, name.size() - 3);
  if (fs::exists(dir / plain)) return dir / plain;
  return {};
}

ImageDataset to_dataset(const IdxImages& img, const std::vector<uint8_t>& lab, const MnistLikeOptions& o,
                        std::string name) {
  ImageDataset d;
  d.name = std::move(name);
  d.images = Tensor::empty({img.count, 1, img.rows, img.cols}, DType::Float32);
  float* x = d.images.data<float>();
  // Same float32 arithmetic as torchvision's ToTensor (x / 255) and Normalize ((x - mean) / std).
  const float mean = (float)o.mean, sd = (float)o.std;
  const int64_t n = (int64_t)img.pixels.size();
  if (o.normalize)
    for (int64_t i = 0; i < n; ++i) x[i] = ((float)img.pixels[i] / 255.0f - mean) / sd;
  else
    for (int64_t i = 0; i < n; ++i) x[i] = (float)img.pixels[i] / 255.0f;
  d.labels = Tensor::empty({(int64_t)lab.size()}, DType::Int64);
  int64_t* y = d.labels.data<int64_t>();
  for (size_t i = 0; i < lab.size(); ++i) y[i] = lab[i];
  return d;
}

ImageDataset rows(const ImageDataset& d, int64_t begin, int64_t end, std::string name) {
  return {d.images.slice(0, begin, end), d.labels.slice(0, begin, end), std::move(name)};
}

}  // namespace

MnistLikeSplits load_mnist_like(const fs::path& dir, const MnistLikeOptions& o) {
  if (!fs::is_directory(dir))
    throw std::runtime_error("data folder '" + dir.string() + "' " +
                             (fs::exists(dir) ? "is not a directory" : "does not exist") + "; expected it to hold " +
                             expected_list() + ". Fix: " + kHint);
  std::vector<fs::path> paths;
  std::string missing;
  for (const auto& f : mnist_like_files()) {
    paths.push_back(find_file(dir, f));
    if (paths.back().empty()) missing += (missing.empty() ? "" : ", ") + f;
  }
  if (!missing.empty())
    throw std::runtime_error("data folder '" + dir.string() + "' lacks " + missing + "; expected " + expected_list() +
                             ". Fix: " + kHint);
  if (o.std <= 0) throw std::invalid_argument("load_mnist_like: std must be > 0");

  int64_t img_rows = 0, img_cols = 0;  // size of the first file loaded (train), for the train/test check
  auto load = [&](const fs::path& ip, const fs::path& lp, const char* name) {
    IdxImages img = read_idx_images(ip);
    const int64_t want_r = o.rows ? o.rows : img_rows, want_c = o.cols ? o.cols : img_cols;
    if ((want_r && img.rows != want_r) || (want_c && img.cols != want_c))
      throw std::runtime_error("data folder '" + dir.string() + "': " + ip.filename().string() + " holds " +
                               std::to_string(img.rows) + "×" + std::to_string(img.cols) + " images but " +
                               (o.rows || o.cols ? "the model expects " : "the training file holds ") +
                               std::to_string(want_r) + "×" + std::to_string(want_c) +
                               "; pass --data pointing to MNIST-format files of " + std::to_string(want_r) + "×" +
                               std::to_string(want_c) + " images");
    img_rows = img.rows;
    img_cols = img.cols;
    std::vector<uint8_t> lab = read_idx_labels(lp, o.num_classes);
    if ((int64_t)lab.size() != img.count)
      throw std::runtime_error("data folder '" + dir.string() + "': " + ip.filename().string() + " holds " +
                               std::to_string(img.count) + " images but " + lp.filename().string() + " holds " +
                               std::to_string(lab.size()) + " labels");
    return to_dataset(img, lab, o, name);
  };
  ImageDataset full = load(paths[0], paths[1], "train");
  MnistLikeSplits s;
  s.test = load(paths[2], paths[3], "test");
  const int64_t n = full.size();
  if (o.valid_size < 0)
    throw std::invalid_argument("load_mnist_like: valid_size must be >= 0, got " + std::to_string(o.valid_size));
  if (o.valid_size >= n) {
    const std::string full_set = "--data with a full training set (MNIST and Fashion-MNIST hold 60000 images)";
    throw std::invalid_argument(
        "data folder '" + dir.string() + "': " + paths[0].filename().string() + " holds " + std::to_string(n) +
        " training images, too few to hold out " + std::to_string(o.valid_size) +
        " for validation (valid_size " + std::to_string(o.valid_size) + " must be in [0, " + std::to_string(n) + ")); " +
        (o.valid_size_flag.empty() ? "this command holds out a fixed " + std::to_string(o.valid_size) + ": pass " + full_set
         : n > 1                   ? "pass " + o.valid_size_flag + " below " + std::to_string(n) + " or " + full_set
                                   : "pass " + full_set));
  }
  s.train = rows(full, 0, n - o.valid_size, "train");
  s.valid = rows(full, n - o.valid_size, n, "valid");
  return s;
}

// ---------------------------------------------------------------- shuffling and batching

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// Uniform in [0, bound) from raw 64-bit outputs, rejecting the biased tail.
uint64_t uniform_below(std::mt19937_64& g, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;  // multiple of bound
  uint64_t r;
  do r = g();
  while (r >= limit);
  return r % bound;
}
}  // namespace

std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, uint64_t epoch) {
  std::vector<int64_t> idx(n);
  for (int64_t i = 0; i < n; ++i) idx[i] = i;
  std::mt19937_64 g(splitmix64(splitmix64(seed) ^ epoch));
  for (int64_t i = n - 1; i > 0; --i) std::swap(idx[i], idx[uniform_below(g, (uint64_t)i + 1)]);
  return idx;
}

Batcher::Batcher(ImageDataset data, int64_t batch_size, uint64_t seed, bool shuffle, bool drop_last)
    : data_(std::move(data)), batch_size_(batch_size), seed_(seed), shuffle_(shuffle), drop_last_(drop_last) {
  if (batch_size < 1) throw std::invalid_argument("Batcher: batch_size must be >= 1, got " + std::to_string(batch_size));
  if (!data_.images.defined() || !data_.labels.defined() || data_.images.dim() != 4 ||
      data_.images.size(0) != data_.labels.numel() || data_.images.dtype() != DType::Float32 ||
      data_.labels.dtype() != DType::Int64)
    throw std::invalid_argument("Batcher: dataset '" + data_.name +
                                "' must hold float32 images [N,C,H,W] and int64 labels [N] with equal N");
  data_.images = data_.images.contiguous();
  data_.labels = data_.labels.contiguous();
  set_epoch(0);
}

void Batcher::set_epoch(uint64_t epoch) {
  epoch_ = epoch;
  cursor_ = 0;
  const int64_t n = data_.size();
  if (shuffle_) {
    order_ = shuffled_indices(n, seed_, epoch);
  } else {
    order_.resize(n);
    for (int64_t i = 0; i < n; ++i) order_[i] = i;
  }
}

int64_t Batcher::num_batches() const {
  const int64_t n = data_.size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

Batch Batcher::batch(int64_t i) const {
  if (i < 0 || i >= num_batches())
    throw std::out_of_range("Batcher: batch " + std::to_string(i) + " of " + std::to_string(num_batches()));
  const int64_t begin = i * batch_size_, end = std::min<int64_t>(begin + batch_size_, data_.size());
  const int64_t b = end - begin;
  Shape shape = data_.images.shape();
  const int64_t per = data_.images.numel() / std::max<int64_t>(1, shape[0]);
  shape[0] = b;
  Batch out;
  out.indices.assign(order_.begin() + begin, order_.begin() + end);
  out.images = Tensor::empty(shape, DType::Float32);
  out.labels = Tensor::empty({b}, DType::Int64);
  const float* src = data_.images.data<float>();
  const int64_t* lab = data_.labels.data<int64_t>();
  float* dst = out.images.data<float>();
  int64_t* y = out.labels.data<int64_t>();
  for (int64_t k = 0; k < b; ++k) {
    const int64_t j = out.indices[k];
    std::memcpy(dst + k * per, src + j * per, sizeof(float) * per);
    y[k] = lab[j];
  }
  return out;
}

bool Batcher::next(Batch& out) {
  if (cursor_ >= num_batches()) return false;
  out = batch(cursor_++);
  return true;
}

}  // namespace nl
