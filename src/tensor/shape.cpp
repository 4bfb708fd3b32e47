#include "tensor/shape.h"

#include <sstream>
#include <stdexcept>

#include "tensor/device.h"
#include "tensor/dtype.h"

namespace nl {

void check_extents(const Shape& s) {
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] < 0)
      throw std::invalid_argument("shape " + shape_str(s) + " has a negative extent (" + std::to_string(s[i]) +
                                  " at dim " + std::to_string(i) + "); extents must be >= 0");
}

namespace {
[[noreturn]] void throw_too_many(const Shape& s, const char* what = "elements") {
  throw std::invalid_argument("shape " + shape_str(s) + " has more than 2^63 " + what +
                              "; no tensor can hold it (check the extents)");
}
}  // namespace

int64_t shape_numel(const Shape& s) {
  check_extents(s);
  int64_t n = 1;
  for (auto d : s)
    if (__builtin_mul_overflow(n, d, &n)) throw_too_many(s);
  return n;
}

Strides contiguous_strides(const Shape& s) {
  shape_numel(s);  // validates extents and the element count
  Strides st(s.size());
  int64_t acc = 1;
  // With a zero extent the element count is 0 but the strides of the other dims can still overflow.
  for (int i = (int)s.size() - 1; i >= 0; --i) {
    st[i] = acc;
    if (i > 0 && __builtin_mul_overflow(acc, s[i], &acc)) throw_too_many(s, "elements per stride");
  }
  return st;
}

std::string shape_str(const Shape& s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << "]";
  return o.str();
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::invalid_argument(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                                  " cannot be broadcast (dim " + std::to_string(i) + ": " +
                                  std::to_string(da) + " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t d = dim < 0 ? dim + ndim : dim;
  if (d < 0 || d >= std::max<int64_t>(ndim, 1))
    throw std::out_of_range(std::string(op) + ": dim " + std::to_string(dim) + " out of range for a " +
                            std::to_string(ndim) + "-d tensor");
  return (int)d;
}

DType parse_dtype(const std::string& s) {
  if (s == "float32" || s == "f32" || s == "float") return DType::Float32;
  if (s == "float64" || s == "f64" || s == "double") return DType::Float64;
  if (s == "int64" || s == "i64" || s == "long") return DType::Int64;
  if (s == "bfloat16" || s == "bf16") return DType::BFloat16;
  throw std::invalid_argument("unknown dtype '" + s + "' (use float32, float64, int64 or bfloat16)");
}

Device parse_device(const std::string& s) {
  if (s == "cpu") return Device::cpu();
  if (s == "cuda") return Device::cuda(0);
  if (s.rfind("cuda:", 0) == 0) {
    const std::string n = s.substr(5);
    if (!n.empty() && n[0] == '-')
      throw std::invalid_argument("invalid device '" + s + "': a CUDA device index cannot be negative; use cuda:N with "
                                  "N = 0, 1, ... (cuda is cuda:0)");
    // Digits only: std::stoi alone would take "1x" as 1 and "+1" as 1.
    if (!n.empty() && n.size() <= 9 && n.find_first_not_of("0123456789") == std::string::npos)
      return Device::cuda(std::stoi(n));
  }
  throw std::invalid_argument("unknown device '" + s + "' (use cpu, cuda or cuda:N with N = 0, 1, ...)");
}

}  // namespace nl
