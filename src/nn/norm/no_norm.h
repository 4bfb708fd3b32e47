#pragma once
// "none": the w/o-Norm baseline of Xu et al. 2019 (Table 1 "w/o Norm"). Identity: z = x.
#include "nn/module.h"

namespace nl {

/// Identity over any shape [..., d]; no parameters, records nothing on the tape.
/// Throws std::invalid_argument on d < 1 or an input whose last dim is not d.
class NoNorm : public Module {
 public:
  explicit NoNorm(int64_t d) : Module("NoNorm"), dim(d) {
    if (d < 1) throw std::invalid_argument("NoNorm: d must be >= 1, got " + std::to_string(d));
  }
  Variable forward(const Variable& x) override {
    if (x.dim() < 1 || x.size(-1) != dim)
      throw std::invalid_argument("NoNorm(" + std::to_string(dim) + "): input " + shape_str(x.shape()) +
                                  " must end in " + std::to_string(dim));
    return x;
  }
  std::string extra_repr() const override { return std::to_string(dim); }
  int64_t dim;
};

}  // namespace nl
