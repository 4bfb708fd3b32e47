#pragma once
// MNIST-format image classification data (MNIST, Fashion-MNIST) as tensors, with the split of
// Xu et al. 2019 (appendix A.3): 55,000 train / 5,000 validation from the training file, 10,000 test.
// Validation is the LAST 5,000 images of the training file (the common TensorFlow
// `input_data.read_data_sets` convention); train is the first 55,000. Both are views of one tensor.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace nl {

/// A labelled image set: images float32 [N, C, H, W] (MNIST: C = 1; CIFAR-10: C = 3), labels int64 [N] (both contiguous, CPU).
struct ImageDataset {
  Tensor images;
  Tensor labels;
  std::string name;  ///< e.g. "train", "valid", "test"
  int64_t size() const { return labels.defined() ? labels.numel() : 0; }
};

/// How load_mnist_like scales pixels. Pixels are always divided by 255 into [0, 1]; with
/// `normalize` they are then mapped to (x − mean) / std (PyTorch's MNIST example uses 0.1307, 0.3081;
/// Fashion-MNIST's statistics are about 0.2860, 0.3530). Default: no normalisation.
struct MnistLikeOptions {
  int64_t valid_size = 5000;  ///< taken from the END of the training file; 0 gives an empty valid set
  bool normalize = false;
  double mean = 0.1307;
  double std = 0.3081;
  int num_classes = 10;
  int64_t rows = 28;  ///< required image height (MnistCnn's input); 0 accepts any (train and test must agree)
  int64_t cols = 28;  ///< required image width; 0 accepts any
  /// The command-line flag that sets valid_size (e.g. "--valid-size"), suggested as the fix when
  /// valid_size does not fit the training file; empty: the command holds out a fixed number.
  std::string valid_size_flag = "";
};

/// The three splits.
struct MnistLikeSplits {
  ImageDataset train, valid, test;
};

/// The four file names expected in an MNIST-like folder (each may also be present uncompressed,
/// without ".gz"): train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz,
/// t10k-labels-idx1-ubyte.gz.
std::vector<std::string> mnist_like_files();

/// Loads an MNIST-like folder into train (first N−valid_size of the training file), valid (last
/// valid_size) and test. Throws std::runtime_error for a missing folder or file (listing the expected
/// file names and suggesting "install the Debian package dataset-fashion-mnist or pass --data DIR"),
/// any IDX error (see read_idx_images), images of another size than opts.rows × opts.cols (or, with 0,
/// train and test images of different sizes), image/label count mismatches, or (std::invalid_argument)
/// valid_size out of [0, N): that message names the folder, its training file and N, and the fix (a
/// full training set, or a smaller opts.valid_size_flag when one is given).
MnistLikeSplits load_mnist_like(const std::filesystem::path& dir, const MnistLikeOptions& opts = {});

/// Permutation of 0..n-1 reproducible on every platform: Fisher–Yates driven by raw outputs of
/// std::mt19937_64 (whose output sequence the C++ standard fixes) seeded with a SplitMix64 mix of
/// (seed, epoch), with unbiased rejection sampling — not std::shuffle or std::uniform_int_distribution,
/// whose results differ between standard libraries.
std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, uint64_t epoch);

/// One mini-batch: images float32 [B, C, H, W], labels int64 [B], and the dataset indices used.
struct Batch {
  Tensor images;
  Tensor labels;
  std::vector<int64_t> indices;
};

/// Seeded mini-batches over an ImageDataset. The order of epoch e is shuffled_indices(N, seed, e)
/// (or 0..N-1 with shuffle = false), so a run is reproducible from (seed, epoch) alone, e.g. when
/// resuming mid-training. The last partial batch is kept unless drop_last.
class Batcher {
 public:
  /// Throws std::invalid_argument for batch_size < 1 or an empty / malformed dataset.
  Batcher(ImageDataset data, int64_t batch_size, uint64_t seed, bool shuffle = true, bool drop_last = false);
  /// Reorders for `epoch` (the constructor starts at epoch 0) and rewinds next().
  void set_epoch(uint64_t epoch);
  /// The current epoch (as last given to set_epoch).
  uint64_t epoch() const { return epoch_; }
  /// Batches per epoch: ceil(N / B), or floor(N / B) with drop_last.
  int64_t num_batches() const;
  /// Batch `i` of the current epoch (0 ≤ i < num_batches(); throws std::out_of_range otherwise).
  Batch batch(int64_t i) const;
  /// Sequential access: fills `out` with the next batch of the epoch and returns true, or returns
  /// false at the end of the epoch (call set_epoch to start the next).
  bool next(Batch& out);
  /// Dataset indices in this epoch's order.
  const std::vector<int64_t>& order() const { return order_; }
  /// The data set batched (contiguous views of the one given).
  const ImageDataset& data() const { return data_; }

 private:
  ImageDataset data_;
  int64_t batch_size_;
  uint64_t seed_;
  bool shuffle_, drop_last_;
  uint64_t epoch_ = 0;
  int64_t cursor_ = 0;
  std::vector<int64_t> order_;
};

}  // namespace nl
