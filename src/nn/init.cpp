#include "nn/init.h"

#include <cmath>
#include <stdexcept>

#include "autograd/tape.h"

namespace nl::init {
namespace {
void check_float(const Tensor& t, const char* fn) {
  if (!t.defined() || !is_floating(t.dtype()))
    throw std::invalid_argument(std::string("init::") + fn + ": needs a defined float tensor");
}
int64_t fan(const Tensor& t, const std::string& mode) {
  auto [in, out] = fan_in_and_out(t);
  if (mode == "fan_in") return in;
  if (mode == "fan_out") return out;
  throw std::invalid_argument("init: mode must be 'fan_in' or 'fan_out', got '" + mode + "'");
}
thread_local bool t_skip_init = false;
}  // namespace

SkipInitGuard::SkipInitGuard() : previous_(t_skip_init) { t_skip_init = true; }
SkipInitGuard::~SkipInitGuard() { t_skip_init = previous_; }
bool SkipInitGuard::active() { return t_skip_init; }

std::pair<int64_t, int64_t> fan_in_and_out(const Tensor& t) {
  if (t.dim() < 2)
    throw std::invalid_argument("init: fan in and fan out need a tensor with at least 2 dims, got " +
                                shape_str(t.shape()));
  int64_t receptive = 1;
  for (int d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

double calculate_gain(const std::string& nl_, double param) {
  if (nl_ == "linear" || nl_ == "identity" || nl_ == "sigmoid" || nl_.rfind("conv", 0) == 0) return 1.0;
  if (nl_ == "tanh") return 5.0 / 3.0;
  if (nl_ == "relu") return std::sqrt(2.0);
  if (nl_ == "leaky_relu") return std::sqrt(2.0 / (1.0 + param * param));
  if (nl_ == "selu") return 0.75;
  throw std::invalid_argument("init::calculate_gain: unknown nonlinearity '" + nl_ +
                              "' (valid: linear, identity, conv1d, conv2d, conv3d, sigmoid, tanh, relu, "
                              "leaky_relu, selu)");
}

void uniform_(Tensor& t, double lo, double hi) {
  check_float(t, "uniform_");
  if (t_skip_init) return;
  NoGradGuard ng;
  t.copy_(Tensor::rand(t.shape(), lo, hi, t.dtype(), t.device()));
}

void normal_(Tensor& t, double mean, double std) {
  check_float(t, "normal_");
  if (t_skip_init) return;
  NoGradGuard ng;
  t.copy_(Tensor::randn(t.shape(), mean, std, t.dtype(), t.device()));
}

void constant_(Tensor& t, double value) {
  check_float(t, "constant_");
  if (!t_skip_init) t.fill_(value);
}
void zeros_(Tensor& t) { constant_(t, 0.0); }
void ones_(Tensor& t) { constant_(t, 1.0); }

void kaiming_uniform_(Tensor& t, double a, const std::string& mode, const std::string& nonlinearity) {
  check_float(t, "kaiming_uniform_");
  const double bound = calculate_gain(nonlinearity, a) * std::sqrt(3.0 / (double)fan(t, mode));
  uniform_(t, -bound, bound);
}

void kaiming_normal_(Tensor& t, double a, const std::string& mode, const std::string& nonlinearity) {
  check_float(t, "kaiming_normal_");
  normal_(t, 0.0, calculate_gain(nonlinearity, a) / std::sqrt((double)fan(t, mode)));
}

void xavier_uniform_(Tensor& t, double gain) {
  check_float(t, "xavier_uniform_");
  auto [in, out] = fan_in_and_out(t);
  const double bound = gain * std::sqrt(6.0 / (double)(in + out));
  uniform_(t, -bound, bound);
}

void xavier_normal_(Tensor& t, double gain) {
  check_float(t, "xavier_normal_");
  auto [in, out] = fan_in_and_out(t);
  normal_(t, 0.0, gain * std::sqrt(2.0 / (double)(in + out)));
}

}  // namespace nl::init
