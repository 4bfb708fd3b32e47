#pragma once
// Anomaly detection (torch.autograd.set_detect_anomaly): while on, every recorded op's output and
// every gradient a node's backward returns is checked for NaN/inf, and the first one found raises
// AnomalyError naming the op. Slow (one pass over every tensor); for finding where a run diverged.
#include <stdexcept>
#include <string>

#include "tensor/tensor.h"

namespace nl {

/// Raised by check_finite when anomaly detection is on and a value is NaN or infinite.
struct AnomalyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Turns anomaly detection on or off for the whole process (default off).
void set_anomaly_detection(bool on);
/// True while anomaly detection is on.
bool anomaly_detection();

/// If detection is on and `t` (float) holds a NaN or inf, throws AnomalyError:
/// "detect_anomaly: the <what> of op '<op>' (shape [..]) holds nan at element i". No-op otherwise.
void check_finite(const Tensor& t, const std::string& op, const char* what);

}  // namespace nl
