#pragma once
// The LayerNorm family's kernel variants that the kernel tests sweep (Xu et al. 2019, Eq. 1 and Theorem 1):
// each one flag of LayerNormOptions away from LayerNorm.
#include "tensor/layer_norm_options.h"

namespace nltest {

/// How many variants norm_variant numbers.
constexpr int kNormVariants = 5;

/// Variant v: 0 LayerNorm, 1 unbiased std with eps added to it (AdaNorm's code), 2 detach-mean,
/// 3 detach-std (detach-variance), 4 no centring (RMS scaling).
inline nl::LayerNormOptions norm_variant(int v) {
  nl::LayerNormOptions o;
  o.unbiased = v == 1;
  o.eps_inside = v != 1;
  o.center = v != 4;
  o.detach_mean = v == 2;
  o.detach_std = v == 3;
  return o;
}

}  // namespace nltest
