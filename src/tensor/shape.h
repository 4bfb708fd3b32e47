#pragma once
// Shapes and strides (in elements), broadcasting per NumPy/PyTorch rules.
#include <cstdint>
#include <string>
#include <vector>

namespace nl {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

/// Throws std::invalid_argument naming `s` if an extent is negative.
void check_extents(const Shape& s);
/// Product of the extents (1 for a scalar shape []). Throws std::invalid_argument naming `s` if an
/// extent is negative or the product exceeds 2^63 - 1 (checked multiplication, never wraps).
int64_t shape_numel(const Shape& s);
/// Row-major (C-contiguous) strides for `s`; throws as shape_numel.
Strides contiguous_strides(const Shape& s);
/// "[2, 3, 4]".
std::string shape_str(const Shape& s);
/// Broadcast result of two shapes (NumPy rules); throws std::invalid_argument naming both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");
/// Wraps a possibly negative dim into [0, ndim); throws std::out_of_range naming `op`.
int wrap_dim(int64_t dim, int64_t ndim, const char* op = "dim");

}  // namespace nl
