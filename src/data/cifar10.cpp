#include "data/cifar10.h"

#include <algorithm>
#include <stdexcept>

#include "data/gzip_reader.h"
#include "data/image_ops.h"

namespace nl {

namespace fs = std::filesystem;

namespace {
constexpr int64_t kPixels = kCifar10RecordBytes - 1;  // 3 × 32 × 32
const char* kHint =
    "pass --data DIR pointing to a folder with the CIFAR-10 binary batches (e.g. ../shared/data/cifar10; "
    "the original cifar-10-batches-bin files, gzip-compressed or plain)";

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// dir/name (ending ".gz"), or the same without ".gz"; empty when neither exists.
fs::path find_file(const fs::path& dir, const std::string& name) {
  if (fs::exists(dir / name)) return dir / name;
  const std::string plain = name.substr(0, name.size() - 3);
  if (fs::exists(dir / plain)) return dir / plain;
  return {};
}
}  // namespace

std::vector<std::string> cifar10_files() {
  std::vector<std::string> v;
  for (int b = 1; b <= 5; ++b) v.push_back("data_batch_" + std::to_string(b) + ".bin.gz");
  v.push_back("test_batch.bin.gz");
  return v;
}

Cifar10Batch read_cifar10_batch(const fs::path& path, int64_t expected_records) {
  if (expected_records < 1)
    throw std::invalid_argument("read_cifar10_batch: expected_records must be >= 1, got " + std::to_string(expected_records));
  GzipReader in(path, "CIFAR-10 file '" + path.string() + "': ");
  const int64_t max_bytes = expected_records * kCifar10RecordBytes;
  std::vector<uint8_t> raw;
  constexpr size_t kChunk = 1 << 20;
  // Read at most one byte more than a full batch: enough to tell "too large" without inflating further.
  while ((int64_t)raw.size() <= max_bytes) {
    const size_t old = raw.size();
    const size_t want = std::min<size_t>(kChunk, (size_t)(max_bytes + 1 - (int64_t)old));
    raw.resize(old + want);
    const size_t got = in.read(raw.data() + old, want);
    raw.resize(old + got);
    if (got < want) break;
  }
  const int64_t n = (int64_t)raw.size();
  if (n == 0) in.fail("is empty; expected 3073-byte records (1 label byte + 3072 pixel bytes). Fix: " + std::string(kHint));
  if (n > max_bytes)
    in.fail("holds more than " + std::to_string(max_bytes) + " bytes (" + std::to_string(expected_records) +
            " records of 3073 bytes); not a CIFAR-10 batch file. Fix: " + kHint);
  if (n % kCifar10RecordBytes != 0) {
    const int64_t rest = n % kCifar10RecordBytes;
    std::string why = n % 3074 == 0 ? " (a whole number of 3074-byte records: a CIFAR-100 file, whose records have two label bytes?)"
                                    : " (truncated or not a CIFAR-10 file?)";
    in.fail("holds " + std::to_string(n) + " bytes, not a whole number of 3073-byte records (1 label + 3072 pixels): " +
            std::to_string(n / kCifar10RecordBytes) + " records and " + std::to_string(rest) + " bytes left over" + why +
            ". Fix: re-download or re-install the file");
  }
  if (n != max_bytes)  // e.g. cut on a record boundary: it would train on fewer images without a word
    in.fail("holds " + std::to_string(n) + " bytes (" + std::to_string(n / kCifar10RecordBytes) +
            " records), but a CIFAR-10 batch file holds " + std::to_string(expected_records) + " records of 3073 bytes (" +
            std::to_string(max_bytes) + " bytes): the file is truncated or incomplete. Fix: re-download the data set "
            "or restore the file from the original cifar-10-batches-bin");
  Cifar10Batch b;
  b.count = n / kCifar10RecordBytes;
  b.labels.resize(b.count);
  b.pixels.resize((size_t)(b.count * kPixels));
  for (int64_t i = 0; i < b.count; ++i) {
    const uint8_t* r = raw.data() + i * kCifar10RecordBytes;
    if (r[0] > 9)
      in.fail("record " + std::to_string(i) + " (byte offset " + std::to_string(i * kCifar10RecordBytes) + ") has label " +
              std::to_string(r[0]) + ", outside 0..9; the file is corrupt or not CIFAR-10. Fix: re-download or re-install the file");
    b.labels[i] = r[0];
    std::copy(r + 1, r + kCifar10RecordBytes, b.pixels.begin() + i * kPixels);
  }
  return b;
}

namespace {
// Images [N, 3, 32, 32] = bytes / 255 of the records `idx` of `b`.
ImageDataset to_dataset(const Cifar10Batch& b, const std::vector<int64_t>& idx, std::string name) {
  const int64_t n = (int64_t)idx.size();
  ImageDataset d{Tensor::empty({n, 3, 32, 32}, DType::Float32), Tensor::empty({n}, DType::Int64), std::move(name)};
  float* x = d.images.data<float>();
  int64_t* y = d.labels.data<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    const uint8_t* p = b.pixels.data() + idx[k] * kPixels;
    for (int64_t j = 0; j < kPixels; ++j) x[k * kPixels + j] = (float)p[j] / 255.0f;
    y[k] = b.labels[idx[k]];
  }
  return d;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}
}  // namespace

Cifar10Splits load_cifar10(const fs::path& dir, const Cifar10Options& o) {
  if (!fs::is_directory(dir))
    throw std::runtime_error("CIFAR-10 folder '" + dir.string() + "' " +
                             (fs::exists(dir) ? "is not a directory" : "does not exist") + "; expected " +
                             join(cifar10_files()) + " (or without .gz). Fix: " + kHint);
  if (o.batches.empty()) throw std::invalid_argument("load_cifar10: no training batch chosen; pass batch numbers from 1 to 5");
  for (size_t i = 0; i < o.batches.size(); ++i) {
    if (o.batches[i] < 1 || o.batches[i] > 5)
      throw std::invalid_argument("load_cifar10: training batch " + std::to_string(o.batches[i]) +
                                  " does not exist; CIFAR-10 has data_batch_1 … data_batch_5");
    if (std::count(o.batches.begin(), o.batches.end(), o.batches[i]) > 1)
      throw std::invalid_argument("load_cifar10: training batch " + std::to_string(o.batches[i]) + " is listed twice");
  }
  if (o.train_limit < 0) throw std::invalid_argument("load_cifar10: train_limit must be >= 0 (0: all)");
  if (o.batch_records < 1)
    throw std::invalid_argument("load_cifar10: batch_records must be >= 1 (10000 for the real files), got " +
                                std::to_string(o.batch_records));
  auto path_of = [&](const std::string& name) {
    fs::path p = find_file(dir, name);
    if (p.empty())
      throw std::runtime_error("CIFAR-10 folder '" + dir.string() + "' lacks " + name + " (or " +
                               name.substr(0, name.size() - 3) + "); expected " + join(cifar10_files()) + ". Fix: " + kHint);
    return p;
  };

  Cifar10Batch all;  // the chosen training batches, concatenated in the order given
  for (int bn : o.batches) {
    Cifar10Batch b = read_cifar10_batch(path_of("data_batch_" + std::to_string(bn) + ".bin.gz"), o.batch_records);
    all.count += b.count;
    all.pixels.insert(all.pixels.end(), b.pixels.begin(), b.pixels.end());
    all.labels.insert(all.labels.end(), b.labels.begin(), b.labels.end());
  }
  if (o.valid_size < 0 || o.valid_size >= all.count)
    throw std::invalid_argument("load_cifar10: valid_size " + std::to_string(o.valid_size) + " must be in [0, " +
                                std::to_string(all.count) + ") for the " + std::to_string(all.count) +
                                " images of the chosen batches");

  Cifar10Splits s;
  s.batches = o.batches;
  const std::vector<int64_t> perm = shuffled_indices(all.count, o.split_seed, 0);
  s.valid_indices.assign(perm.begin(), perm.begin() + o.valid_size);
  std::vector<int64_t> train(perm.begin() + o.valid_size, perm.end());
  std::sort(s.valid_indices.begin(), s.valid_indices.end());
  std::sort(train.begin(), train.end());
  if (o.train_limit > 0 && o.train_limit < (int64_t)train.size()) train.resize(o.train_limit);

  s.train = to_dataset(all, train, "train");
  s.valid = to_dataset(all, s.valid_indices, "valid");
  all = {};  // release the training bytes before the test batch is read
  const Cifar10Batch test = read_cifar10_batch(path_of("test_batch.bin.gz"), o.batch_records);
  s.test = to_dataset(test, iota(test.count), "test");

  if (o.grayscale) {
    s.train = to_grayscale(s.train);
    s.valid = to_grayscale(s.valid);
    s.test = to_grayscale(s.test);
  }
  if (o.normalize) {
    channel_stats(s.train, s.mean, s.std);
    s.train = normalize_channels(s.train, s.mean, s.std);
    if (s.valid.size()) s.valid = normalize_channels(s.valid, s.mean, s.std);
    s.test = normalize_channels(s.test, s.mean, s.std);
  }
  return s;
}

}  // namespace nl
