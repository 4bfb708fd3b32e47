#include "nn/dropout.h"

#include <sstream>

namespace nl {

Dropout::Dropout(double p_) : Module("Dropout"), p(p_) {
  if (p < 0 || p >= 1) throw std::invalid_argument("Dropout: p must be in [0, 1), got " + std::to_string(p));
}

Variable Dropout::forward(const Variable& x) { return dropout(x, p, is_training()); }

std::string Dropout::extra_repr() const {
  std::ostringstream o;
  o << "p=" << p;
  return o.str();
}

}  // namespace nl
