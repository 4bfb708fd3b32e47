#include "data/image_ops.h"

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

namespace nl {

namespace {
int64_t per_image(const ImageDataset& d) { return d.size() ? d.images.numel() / d.size() : 0; }
}  // namespace

ImageDataset take_first(const ImageDataset& d, int64_t n) {
  if (n <= 0 || n > d.size())
    throw std::invalid_argument("take_first: cannot take " + std::to_string(n) + " images of '" + d.name +
                                "', which holds " + std::to_string(d.size()) + "; pass a subset size from 1 to " +
                                std::to_string(d.size()));
  return {d.images.slice(0, 0, n), d.labels.slice(0, 0, n), d.name};
}

ImageDataset take_rows(const ImageDataset& d, const std::vector<int64_t>& idx) {
  const Tensor src = d.images.contiguous();
  const Tensor lab = d.labels.contiguous();
  Shape shape = src.shape();
  shape[0] = (int64_t)idx.size();
  ImageDataset out{Tensor::empty(shape, DType::Float32), Tensor::empty({(int64_t)idx.size()}, DType::Int64), d.name};
  const int64_t per = per_image(d);
  const float* x = src.data<float>();
  const int64_t* y = lab.data<int64_t>();
  float* ox = out.images.data<float>();
  int64_t* oy = out.labels.data<int64_t>();
  for (size_t k = 0; k < idx.size(); ++k) {
    if (idx[k] < 0 || idx[k] >= d.size())
      throw std::out_of_range("take_rows: index " + std::to_string(idx[k]) + " outside '" + d.name + "' of " +
                              std::to_string(d.size()) + " images");
    std::memcpy(ox + (int64_t)k * per, x + idx[k] * per, sizeof(float) * per);
    oy[k] = y[idx[k]];
  }
  return out;
}

ImageDataset permute_labels(const ImageDataset& d, uint64_t seed, uint64_t stream) {
  const std::vector<int64_t> old = d.labels.contiguous().to_vector<int64_t>();
  const std::vector<int64_t> p = shuffled_indices((int64_t)old.size(), seed, stream);
  std::vector<int64_t> y(old.size());
  for (size_t i = 0; i < old.size(); ++i) y[i] = old[p[i]];
  return {d.images, Tensor::from_vector(y, {(int64_t)y.size()}), d.name};
}

ImageDataset to_grayscale(const ImageDataset& d) {
  if (d.images.dim() != 4) throw std::invalid_argument("to_grayscale: images of '" + d.name + "' must be [N, C, H, W]");
  const int64_t c = d.images.size(1);
  if (c == 1) return d;
  if (c != 3)
    throw std::invalid_argument("to_grayscale: '" + d.name + "' has " + std::to_string(c) +
                                " channels; grayscale needs RGB (3) or is a no-op on 1");
  const Tensor src = d.images.contiguous();
  const int64_t n = src.size(0), hw = src.size(2) * src.size(3);
  ImageDataset out{Tensor::empty({n, 1, src.size(2), src.size(3)}, DType::Float32), d.labels, d.name};
  const float* x = src.data<float>();
  float* o = out.images.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float *r = x + i * 3 * hw, *g = r + hw, *b = g + hw;
    for (int64_t k = 0; k < hw; ++k) o[i * hw + k] = 0.299f * r[k] + 0.587f * g[k] + 0.114f * b[k];
  }
  return out;
}

void channel_stats(const ImageDataset& d, std::vector<double>& mean, std::vector<double>& std) {
  if (d.size() == 0 || d.images.dim() != 4)
    throw std::invalid_argument("channel_stats: '" + d.name + "' must be a non-empty [N, C, H, W] image set");
  const Tensor src = d.images.contiguous();
  const int64_t n = src.size(0), c = src.size(1), hw = src.size(2) * src.size(3);
  const float* x = src.data<float>();
  std::vector<double> s(c, 0.0), s2(c, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* p = x + (i * c + ch) * hw;
      double a = 0, a2 = 0;
      for (int64_t k = 0; k < hw; ++k) a += p[k], a2 += (double)p[k] * p[k];
      s[ch] += a;
      s2[ch] += a2;
    }
  mean.assign(c, 0.0);
  std.assign(c, 0.0);
  const double cnt = (double)n * (double)hw;
  for (int64_t ch = 0; ch < c; ++ch) {
    mean[ch] = s[ch] / cnt;
    std[ch] = std::sqrt(std::max(0.0, s2[ch] / cnt - mean[ch] * mean[ch]));
  }
}

ImageDataset normalize_channels(const ImageDataset& d, const std::vector<double>& mean, const std::vector<double>& std) {
  if (d.images.dim() != 4) throw std::invalid_argument("normalize_channels: images of '" + d.name + "' must be [N, C, H, W]");
  const int64_t n = d.images.size(0), c = d.images.size(1), hw = d.images.size(2) * d.images.size(3);
  if ((int64_t)mean.size() != c || (int64_t)std.size() != c)
    throw std::invalid_argument("normalize_channels: '" + d.name + "' has " + std::to_string(c) + " channels but " +
                                std::to_string(mean.size()) + " means and " + std::to_string(std.size()) + " stds");
  for (int64_t ch = 0; ch < c; ++ch)
    if (!(std[ch] > 0))
      throw std::invalid_argument("normalize_channels: std of channel " + std::to_string(ch) + " is " +
                                  std::to_string(std[ch]) + "; it must be > 0 (use 1 for a constant channel)");
  ImageDataset out{d.images.clone(), d.labels, d.name};
  float* x = out.images.data<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      float* p = x + (i * c + ch) * hw;
      const float m = (float)mean[ch], s = (float)std[ch];
      for (int64_t k = 0; k < hw; ++k) p[k] = (p[k] - m) / s;
    }
  return out;
}

Tensor random_crop_flip(const Tensor& images, int64_t pad, uint64_t seed, uint64_t epoch, int64_t batch_index) {
  if (images.dim() != 4) throw std::invalid_argument("random_crop_flip: images must be [B, C, H, W], got " + images.str());
  if (pad < 0) throw std::invalid_argument("random_crop_flip: pad must be >= 0, got " + std::to_string(pad));
  const Tensor src = images.contiguous();
  const int64_t b = src.size(0), c = src.size(1), h = src.size(2), w = src.size(3);
  Tensor out = Tensor::zeros(src.shape(), DType::Float32);
  const float* x = src.data<float>();
  float* o = out.data<float>();
  // std::seed_seq's mixing and mt19937_64's outputs are fixed by the C++ standard: the same crops on
  // every platform. The modulo bias of g() % (2 pad + 1) is below 1e-18.
  std::seed_seq sq{(uint32_t)seed, (uint32_t)(seed >> 32), (uint32_t)epoch, (uint32_t)(epoch >> 32),
                   (uint32_t)batch_index, (uint32_t)((uint64_t)batch_index >> 32)};
  std::mt19937_64 g(sq);
  const uint64_t span = 2 * (uint64_t)pad + 1;
  for (int64_t i = 0; i < b; ++i) {
    const int64_t dy = (int64_t)(g() % span) - pad, dx = (int64_t)(g() % span) - pad;
    const bool flip = g() & 1;
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* p = x + (i * c + ch) * h * w;
      float* q = o + (i * c + ch) * h * w;
      for (int64_t y = 0; y < h; ++y) {
        const int64_t sy = y + dy;
        if (sy < 0 || sy >= h) continue;  // zero padding
        for (int64_t xx = 0; xx < w; ++xx) {
          const int64_t sx = (flip ? w - 1 - xx : xx) + dx;
          if (sx >= 0 && sx < w) q[y * w + xx] = p[sy * w + sx];
        }
      }
    }
  }
  return out;
}

}  // namespace nl
