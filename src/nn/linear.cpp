#include "nn/linear.h"

#include <cmath>

#include "nn/init.h"

namespace nl {

Linear::Linear(int64_t in, int64_t out, bool with_bias, DType dtype)
    : Module("Linear"), in_features(in), out_features(out) {
  if (in < 1 || out < 1)
    throw std::invalid_argument("Linear: in and out must be >= 1, got " + std::to_string(in) + ", " + std::to_string(out));
  Tensor w = Tensor::empty({out, in}, dtype);
  init::kaiming_uniform_(w, std::sqrt(5.0));
  weight = register_parameter("weight", w);
  if (with_bias) {
    Tensor b = Tensor::empty({out}, dtype);
    const double bound = 1.0 / std::sqrt((double)in);
    init::uniform_(b, -bound, bound);
    bias = register_parameter("bias", b);
  }
}

Variable Linear::forward(const Variable& x) {
  if (x.dim() < 1 || x.size(-1) != in_features)
    throw std::invalid_argument("Linear(" + std::to_string(in_features) + " -> " + std::to_string(out_features) +
                                "): input " + shape_str(x.shape()) + " must end in " + std::to_string(in_features));
  return linear(x, weight, bias, autocast_output);
}

std::string Linear::extra_repr() const {
  return "in=" + std::to_string(in_features) + ", out=" + std::to_string(out_features) +
         ", bias=" + (bias.defined() ? "true" : "false");
}

}  // namespace nl
