// Elementwise differentiable ops: forward and backward side by side. Binary ops broadcast; their
// backward sums each gradient back to its input's shape (sum_to).
#include <stdexcept>

#include "autograd/functions.h"

namespace nl {

Variable add(const Variable& a, const Variable& b) {
  Shape sa = a.shape(), sb = b.shape();
  return make_result(nl::add(a.data(), b.data()), "Add", {a, b},
                     [sa, sb](const Tensor& g, const std::vector<bool>& n) {
                       return std::vector<Tensor>{n[0] ? sum_to(g, sa) : Tensor(), n[1] ? sum_to(g, sb) : Tensor()};
                     });
}

Variable sub(const Variable& a, const Variable& b) {
  Shape sa = a.shape(), sb = b.shape();
  return make_result(nl::sub(a.data(), b.data()), "Sub", {a, b},
                     [sa, sb](const Tensor& g, const std::vector<bool>& n) {
                       return std::vector<Tensor>{n[0] ? sum_to(g, sa) : Tensor(),
                                                  n[1] ? sum_to(nl::neg(g), sb) : Tensor()};
                     });
}

Variable mul(const Variable& a, const Variable& b) {
  Tensor x = a.data(), y = b.data();
  return make_result(nl::mul(x, y), "Mul", {a, b},
                     [x, y](const Tensor& g, const std::vector<bool>& n) {
                       return std::vector<Tensor>{n[0] ? sum_to(nl::mul(g, y), x.shape()) : Tensor(),
                                                  n[1] ? sum_to(nl::mul(g, x), y.shape()) : Tensor()};
                     },
                     {saved(x, "input a"), saved(y, "input b")});
}

Variable div(const Variable& a, const Variable& b) {
  Tensor x = a.data(), y = b.data();
  return make_result(nl::div(x, y), "Div", {a, b},
                     [x, y](const Tensor& g, const std::vector<bool>& n) {
                       Tensor ga, gb;
                       if (n[0]) ga = sum_to(nl::div(g, y), x.shape());
                       if (n[1]) gb = sum_to(nl::neg(nl::div(nl::mul(g, x), nl::mul(y, y))), y.shape());
                       return std::vector<Tensor>{ga, gb};
                     },
                     {saved(x, "input a"), saved(y, "input b")});
}

Variable neg(const Variable& x) {
  return make_result(nl::neg(x.data()), "Neg", {x},
                     [](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{nl::neg(g)}; });
}

Variable affine(const Variable& x, double a, double b) {
  return make_result(nl::affine(x.data(), a, b), "Affine", {x},
                     [a](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::affine(g, a, 0.0)};
                     },
                     {}, "a=" + note_number(a) + ", b=" + note_number(b));
}

Variable pow(const Variable& x, double p) {
  Tensor xv = x.data();
  return make_result(nl::pow(xv, p), "Pow", {x},
                     [xv, p](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::mul(g, nl::affine(nl::pow(xv, p - 1.0), p, 0.0))};
                     },
                     {saved(xv, "input")}, "p=" + note_number(p));
}

// Ops whose derivative is a function of their output y.
Variable exp(const Variable& x) {
  Tensor y = nl::exp(x.data());
  return make_result(y, "Exp", {x},
                     [y](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{nl::mul(g, y)}; },
                     {saved(y, "output")});
}

Variable log(const Variable& x) {
  Tensor xv = x.data();
  return make_result(nl::log(xv), "Log", {x},
                     [xv](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{nl::div(g, xv)}; },
                     {saved(xv, "input")});
}

Variable sqrt(const Variable& x) {
  Tensor y = nl::sqrt(x.data());
  return make_result(y, "Sqrt", {x},
                     [y](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::div(g, nl::affine(y, 2.0, 0.0))};
                     },
                     {saved(y, "output")});
}

Variable rsqrt(const Variable& x) {
  Tensor y = nl::rsqrt(x.data());
  return make_result(y, "Rsqrt", {x},
                     [y](const Tensor& g, const std::vector<bool>&) {  // d/dx x^-1/2 = -1/2 y^3
                       return std::vector<Tensor>{nl::mul(g, nl::affine(nl::pow(y, 3.0), -0.5, 0.0))};
                     },
                     {saved(y, "output")});
}

Variable tanh(const Variable& x) {
  Tensor y = nl::tanh(x.data());
  return make_result(y, "Tanh", {x},
                     [y](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::mul(g, nl::affine(nl::square(y), -1.0, 1.0))};
                     },
                     {saved(y, "output")});
}

Variable sigmoid(const Variable& x) {
  Tensor y = nl::sigmoid(x.data());
  return make_result(y, "Sigmoid", {x},
                     [y](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::mul(g, nl::mul(y, nl::affine(y, -1.0, 1.0)))};
                     },
                     {saved(y, "output")});
}

Variable relu(const Variable& x) {
  Tensor y = nl::relu(x.data());
  return make_result(y, "ReLU", {x},
                     [y](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::relu_grad(g, y)};
                     },
                     {saved(y, "output")});
}

Variable gelu(const Variable& x) {
  Tensor xv = x.data();
  return make_result(nl::gelu(xv), "GELU", {x},
                     [xv](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::mul(g, nl::gelu_grad(xv))};
                     },
                     {saved(xv, "input")});
}

Variable abs(const Variable& x) {
  Tensor xv = x.data();
  return make_result(nl::abs(xv), "Abs", {x},
                     [xv](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::mul(g, nl::sign(xv))};
                     },
                     {saved(xv, "input")});
}

Variable square(const Variable& x) {
  Tensor xv = x.data();
  return make_result(nl::square(xv), "Square", {x},
                     [xv](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::mul(g, nl::affine(xv, 2.0, 0.0))};
                     },
                     {saved(xv, "input")});
}

Variable where(const Tensor& cond, const Variable& a, const Variable& b) {
  Shape sa = a.shape(), sb = b.shape();
  return make_result(nl::where(cond, a.data(), b.data()), "Where", {a, b},
                     [cond, sa, sb](const Tensor& g, const std::vector<bool>& n) {
                       Tensor z = Tensor::zeros({}, g.dtype(), g.device());
                       Tensor ga, gb;
                       if (n[0]) ga = sum_to(nl::where(cond, g, z), sa);
                       if (n[1]) gb = sum_to(nl::where(cond, z, g), sb);
                       return std::vector<Tensor>{ga, gb};
                     },
                     {saved(cond, "condition")});
}

Variable masked_fill(const Variable& x, const Tensor& mask, double value) {
  Tensor m = mask;
  return make_result(nl::masked_fill(x.data(), mask, value), "MaskedFill", {x},
                     [m](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{nl::masked_fill(g, m, 0.0)};
                     },
                     {saved(m, "mask")});
}

Variable operator+(const Variable& a, const Variable& b) { return add(a, b); }
Variable operator-(const Variable& a, const Variable& b) { return sub(a, b); }
Variable operator*(const Variable& a, const Variable& b) { return mul(a, b); }
Variable operator/(const Variable& a, const Variable& b) { return div(a, b); }
Variable operator-(const Variable& x) { return neg(x); }
Variable operator+(const Variable& x, double s) { return affine(x, 1.0, s); }
Variable operator-(const Variable& x, double s) { return affine(x, 1.0, -s); }
Variable operator*(const Variable& x, double s) { return affine(x, s, 0.0); }
Variable operator/(const Variable& x, double s) { return affine(x, 1.0 / s, 0.0); }
Variable operator*(double s, const Variable& x) { return affine(x, s, 0.0); }
Variable operator+(double s, const Variable& x) { return affine(x, 1.0, s); }
Variable operator-(double s, const Variable& x) { return affine(x, -1.0, s); }

}  // namespace nl
