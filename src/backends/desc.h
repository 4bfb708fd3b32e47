#pragma once
// Desc: the strided view every backend kernel receives (data pointer, dtype, device index, shape and
// strides in elements). Operands are already broadcast to the output shape by the front end (stride 0
// on broadcast dims). Kept C++17-clean: CUDA sources include it.
#include <cstdint>

#include "tensor/dtype.h"

namespace nl {

constexpr int kMaxDims = 8;

/// A strided view handed to kernels: data points at the first element; shape/strides in elements;
/// device_index is the index of the device holding `data` (cuda:N; always 0 on the CPU).
struct Desc {
  void* data = nullptr;
  DType dtype = DType::Float32;
  int device_index = 0;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
  bool contiguous() const {
    int64_t acc = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      if (shape[i] != 1 && strides[i] != acc) return false;
      acc *= shape[i];
    }
    return true;
  }
};

}  // namespace nl
