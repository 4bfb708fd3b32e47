#pragma once
// Parameter-free elementwise layers. Any input shape; output has the same shape.
#include "nn/module.h"

namespace nl {

/// max(x, 0) (Nair & Hinton 2010).
class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Variable forward(const Variable& x) override { return relu(x); }
};

/// x * Phi(x), the exact erf form (Hendrycks & Gimpel 2016; PyTorch's default).
class GELU : public Module {
 public:
  GELU() : Module("GELU") {}
  Variable forward(const Variable& x) override { return gelu(x); }
};

/// tanh(x).
class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Variable forward(const Variable& x) override { return tanh(x); }
};

/// Returns its input unchanged (records nothing on the tape).
class Identity : public Module {
 public:
  Identity() : Module("Identity") {}
  Variable forward(const Variable& x) override { return x; }
};

/// Merges dims [start_dim, end_dim] into one, e.g. [N, C, H, W] -> [N, C*H*W] with the defaults.
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Variable forward(const Variable& x) override { return flatten(x, start_dim, end_dim); }
  std::string extra_repr() const override {
    return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
  }
  int64_t start_dim, end_dim;
};

}  // namespace nl
