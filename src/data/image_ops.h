#pragma once
// Operations on labelled image sets (ImageDataset, image_dataset.h) shared by the image tasks: a
// prefix subset, random-label variants (Zhang et al. 2017's "random labels" as used by Ni et al. 2024's
// MNIST-RL / CIFAR-10-RL), grayscale, per-channel normalisation, and random crop + horizontal flip.
// Every random choice is a pure function of its seeds (shuffled_indices / SplitMix64 + mt19937_64), so
// results repeat on every platform.
#include <cstdint>
#include <vector>

#include "data/image_dataset.h"

namespace nl {

/// The first n images of `d` (views, no copy). Throws std::invalid_argument unless 0 < n <= d.size().
ImageDataset take_first(const ImageDataset& d, int64_t n);

/// The images of `d` at `indices` (a contiguous copy), in that order. Throws std::out_of_range for an
/// index outside [0, d.size()).
ImageDataset take_rows(const ImageDataset& d, const std::vector<int64_t>& indices);

/// Random-label variant: the labels of `d` permuted once, new[i] = old[p[i]] with
/// p = shuffled_indices(N, seed, stream), so the class counts stay those of the real labels while
/// each image's label is random. Use a different `stream` per split. Returns a copy with new labels
/// (images shared).
ImageDataset permute_labels(const ImageDataset& d, uint64_t seed, uint64_t stream = 0);

/// Grayscale [N, 1, H, W] from RGB [N, 3, H, W] by ITU-R BT.601 luma 0.299 R + 0.587 G + 0.114 B.
/// A one-channel input is returned unchanged. Throws std::invalid_argument for another channel count.
ImageDataset to_grayscale(const ImageDataset& d);

/// Per-channel mean and (biased) standard deviation of `d`'s images [N, C, H, W], in float64.
/// Throws std::invalid_argument for an empty set.
void channel_stats(const ImageDataset& d, std::vector<double>& mean, std::vector<double>& std);

/// (x − mean_c) / std_c per channel, in place on a contiguous copy; returns it. Throws
/// std::invalid_argument when mean/std do not have C entries or a std is not > 0 (a constant channel:
/// pass std 1 for it).
ImageDataset normalize_channels(const ImageDataset& d, const std::vector<double>& mean, const std::vector<double>& std);

/// Standard CIFAR augmentation of a batch images [B, C, H, W]: each image is zero-padded by `pad`
/// pixels on every side, cropped back to H × W at a random offset, and flipped left-right with
/// probability 1/2 (He et al. 2016, §4.2). The draws depend only on (seed, epoch, batch_index), so a
/// resumed run sees the same crops. pad = 0 gives flips only. Throws std::invalid_argument for a
/// non-4-D input or pad < 0.
Tensor random_crop_flip(const Tensor& images, int64_t pad, uint64_t seed, uint64_t epoch, int64_t batch_index);

}  // namespace nl
