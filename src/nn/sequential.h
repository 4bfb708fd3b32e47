#pragma once
// Sequential container, as torch.nn.Sequential: children named "0", "1", ... in order.
#include <initializer_list>

#include "nn/module.h"

namespace nl {

/// forward(x) = m_{n-1}(...m_1(m_0(x))). An empty Sequential returns its input.
class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  Sequential(std::initializer_list<std::shared_ptr<Module>> ms) : Sequential() {
    for (auto& m : ms) push_back(m);
  }
  /// Appends `m` under the name of its position; throws std::invalid_argument if null.
  Sequential& push_back(std::shared_ptr<Module> m) {
    add_child(std::to_string(layers_.size()), m);
    layers_.push_back(std::move(m));
    return *this;
  }
  Variable forward(const Variable& x) override {
    Variable h = x;
    for (auto& m : layers_) h = (*m)(h);
    return h;
  }
  size_t size() const { return layers_.size(); }
  /// The i-th layer; throws std::out_of_range.
  const std::shared_ptr<Module>& operator[](size_t i) const { return layers_.at(i); }

 private:
  std::vector<std::shared_ptr<Module>> layers_;
};

}  // namespace nl
