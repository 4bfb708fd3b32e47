#pragma once
// CIFAR-10, binary version (Krizhevsky 2009; the files of cifar-10-batches-bin, here gzip-compressed as
// in ../shared/data/cifar10, see its SOURCE.md): each batch file is a run of 3073-byte records, one label
// byte (0..9) then 3072 pixel bytes (1024 red, 1024 green, 1024 blue; each plane 32×32 row-major).
// Files are read gzip-compressed (data_batch_K.bin.gz) or plain (data_batch_K.bin).
//
// load_cifar10 gives train / valid / test ImageDatasets [N, 3, 32, 32] (or [N, 1, 32, 32] grayscale):
// the chosen training batches are split by a seeded permutation into train and valid (45,000 / 5,000
// for all five batches), pixels are x/255, then optionally normalised per channel with the mean and std
// of the train split (applied to all three splits).
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/image_dataset.h"

namespace nl {

/// Bytes of one CIFAR-10 record: 1 label + 3 × 32 × 32 pixels.
inline constexpr int64_t kCifar10RecordBytes = 3073;
/// Records in each original batch file.
inline constexpr int64_t kCifar10BatchRecords = 10000;

/// One batch file: `count` records; pixels count × 3072 bytes (planar RGB per image), labels 0..9.
struct Cifar10Batch {
  int64_t count = 0;
  std::vector<uint8_t> pixels;
  std::vector<uint8_t> labels;
};

/// Reads one batch file (.gz or plain) that must hold exactly `expected_records` records (10,000 in the
/// real data set; tests write smaller files). Throws std::runtime_error starting "CIFAR-10 file '<path>': "
/// for a missing file, corrupt gzip data, an empty file, a size that is not a whole number of
/// 3073-byte records (naming the bytes left over, and CIFAR-100's 3074-byte records as a likely
/// cause), another number of records than expected (naming the size found and the one expected: a
/// truncated file; fix: re-download or restore the data set), or a label outside 0..9 (naming the
/// record); std::invalid_argument for expected_records < 1.
Cifar10Batch read_cifar10_batch(const std::filesystem::path& path, int64_t expected_records = kCifar10BatchRecords);

/// Options of load_cifar10.
struct Cifar10Options {
  std::vector<int> batches = {1, 2, 3, 4, 5};  ///< training batches to load (each 1..5, no repeats)
  int64_t valid_size = 5000;  ///< held out of the loaded training images; 0: empty valid set
  uint64_t split_seed = 0;    ///< seed of the train/valid permutation (shuffled_indices(N, seed, 0))
  int64_t train_limit = 0;    ///< keep only the first N train images (in file order); 0: all
  bool grayscale = false;     ///< one channel, ITU-R BT.601 luma 0.299 R + 0.587 G + 0.114 B of x/255
  bool normalize = true;      ///< (x − mean_c) / std_c with the train split's per-channel statistics
  int64_t batch_records = kCifar10BatchRecords;  ///< records every batch file must hold (10,000; tests' tiny files: fewer)
};

/// The three splits plus what a results file must record about them.
struct Cifar10Splits {
  ImageDataset train, valid, test;
  std::vector<int> batches;             ///< training batches loaded, in the order given
  std::vector<int64_t> valid_indices;   ///< indices (into the loaded training images, in batch order) held out, ascending
  std::vector<double> mean, std;        ///< per-channel statistics used (of x/255, train split); empty without normalize
};

/// "data_batch_1.bin.gz" … "data_batch_5.bin.gz", then "test_batch.bin.gz" (each may be plain).
std::vector<std::string> cifar10_files();

/// Loads a CIFAR-10 folder (see the file comment). Throws std::runtime_error for a missing folder or
/// file (listing the expected names and the fix), any read_cifar10_batch error (a file without exactly
/// batch_records records among them), and std::invalid_argument for a batch number outside 1..5 or
/// repeated, valid_size outside [0, loaded images), a negative train_limit or batch_records < 1.
Cifar10Splits load_cifar10(const std::filesystem::path& dir, const Cifar10Options& opts = {});

}  // namespace nl
