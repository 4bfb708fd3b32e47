#pragma once
// LayerNormOptions: the variants of the LayerNorm family as flags of one kernel (Xu et al. 2019, Eq. 1 and
// Theorem 1). A plain value header with no dependencies, like dtype.h and device.h, so that the tensor
// front end (tensor/ops_nn.h) and the kernels (backends/fused_kernels.h, NormKernelOpts) name the same
// struct without the backends seeing a Tensor.

namespace nl {

/// Options of the fused LayerNorm family (layer_norm, layer_norm_backward).
struct LayerNormOptions {
  double eps = 1e-5;
  bool unbiased = false;    ///< std with 1/(H-1) (AdaNorm code) instead of 1/H (paper, torch LN)
  bool eps_inside = true;   ///< sqrt(var + eps) (torch) vs sqrt(var) + eps (AdaNorm code)
  bool center = true;       ///< subtract the mean (false: RMS-style scaling)
  bool detach_mean = false; ///< no gradient through the mean
  bool detach_std = false;  ///< no gradient through the std
};

}  // namespace nl
