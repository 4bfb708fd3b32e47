#pragma once
// Parameter initialisers, in place, following torch.nn.init (same fan and gain conventions), drawing
// from the global generator (nl::manual_seed). Every function keeps the tensor's dtype and shape and
// throws std::invalid_argument on a non-float tensor.
//
// Fans (torch.nn.init._calculate_fan_in_and_fan_out): for a tensor [out, in, k1, k2, ...],
//   receptive = k1 * k2 * ..., fan_in = in * receptive, fan_out = out * receptive;
//   fewer than 2 dims throws.
// Gains (torch.nn.init.calculate_gain): linear/conv*/sigmoid 1, tanh 5/3, relu sqrt(2),
//   leaky_relu sqrt(2 / (1 + a^2)), selu 3/4.
#include <string>
#include <utility>

#include "tensor/tensor.h"

namespace nl::init {

/// (fan_in, fan_out) of a weight tensor [out, in, ...]; throws std::invalid_argument if dim() < 2.
std::pair<int64_t, int64_t> fan_in_and_out(const Tensor& t);
/// Recommended gain for `nonlinearity` (param = negative slope a for leaky_relu); throws on an unknown name.
double calculate_gain(const std::string& nonlinearity, double param = 0.01);

/// While one is alive on this thread, uniform_, normal_ and constant_ (and so every initialiser here) check
/// their tensor and return without writing it or drawing from the generator: a model built under the guard
/// has its parameters' blocks allocated but untouched. The trainer sizes a model this way before building it
/// for real (Trainer: a model too big for memory is refused before minutes of drawing its weights).
/// Guards nest; the previous state comes back when one is destroyed.
class SkipInitGuard {
 public:
  SkipInitGuard();
  ~SkipInitGuard();
  SkipInitGuard(const SkipInitGuard&) = delete;
  SkipInitGuard& operator=(const SkipInitGuard&) = delete;
  /// True while a guard is alive on this thread.
  static bool active();

 private:
  bool previous_;
};

/// U(lo, hi).
void uniform_(Tensor& t, double lo = 0.0, double hi = 1.0);
/// N(mean, std^2).
void normal_(Tensor& t, double mean = 0.0, double std = 1.0);
void zeros_(Tensor& t);
void ones_(Tensor& t);
/// Fill with a constant.
void constant_(Tensor& t, double value);
/// He et al. 2015, Eq. 16 (uniform form): U(-b, b), b = gain * sqrt(3 / fan), gain =
/// calculate_gain(nonlinearity, a), fan = fan_in (mode "fan_in") or fan_out ("fan_out").
/// PyTorch's Linear/Conv default is kaiming_uniform_(w, a = sqrt(5)), i.e. b = 1/sqrt(fan_in).
void kaiming_uniform_(Tensor& t, double a = 0.0, const std::string& mode = "fan_in",
                      const std::string& nonlinearity = "leaky_relu");
/// He et al. 2015: N(0, std^2), std = gain / sqrt(fan).
void kaiming_normal_(Tensor& t, double a = 0.0, const std::string& mode = "fan_in",
                     const std::string& nonlinearity = "leaky_relu");
/// Glorot & Bengio 2010, Eq. 16: U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out)).
void xavier_uniform_(Tensor& t, double gain = 1.0);
/// Glorot & Bengio 2010: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)).
void xavier_normal_(Tensor& t, double gain = 1.0);

}  // namespace nl::init
