#include "optim/accumulate.h"

#include <stdexcept>
#include <string>

#include "autograd/tape.h"
#include "tensor/ops.h"

namespace nl {

GradAccumulator::GradAccumulator(std::vector<Variable> params, int64_t update_freq, Normalize mode)
    : params_(std::move(params)), update_freq_(update_freq), mode_(mode) {
  if (update_freq < 1)
    throw std::invalid_argument("GradAccumulator: update_freq must be >= 1, got " + std::to_string(update_freq));
}

bool GradAccumulator::accumulate(double sample_size) {
  if (!(sample_size >= 0))
    throw std::invalid_argument("GradAccumulator: sample_size must be >= 0, got " + std::to_string(sample_size));
  ++count_;
  samples_ += sample_size;
  return count_ >= update_freq_;
}

double GradAccumulator::finalize() {
  if (count_ == 0) throw std::logic_error("GradAccumulator::finalize: no micro-batch was accumulated");
  double denom = mode_ == Normalize::Mean ? (double)count_ : samples_;
  if (!(denom > 0)) throw std::logic_error("GradAccumulator::finalize: total sample size is 0");
  const double factor = 1.0 / denom;
  reset();
  if (factor != 1.0) {
    NoGradGuard no_grad;
    for (auto p : params_)
      if (p.defined() && p.grad().defined()) p.set_grad((p.grad() * factor).contiguous());
  }
  return factor;
}

void GradAccumulator::reset() {
  count_ = 0;
  samples_ = 0;
}

}  // namespace nl
