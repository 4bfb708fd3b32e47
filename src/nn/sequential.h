#pragma once
// Sequential container, as torch.nn.Sequential: children named "0", "1", ... in order.
#include <concepts>
#include <initializer_list>
#include <memory>
#include <type_traits>

#include "nn/module.h"

namespace nl {

class Sequential;
namespace detail {
/// A module given by value as a temporary (moved into the container; never a Sequential itself, which
/// would hijack its move), or anything that converts to shared_ptr<Module>.
template <class M>
concept SequentialArg = (std::derived_from<std::remove_cvref_t<M>, Module> && !std::is_lvalue_reference_v<M> &&
                         !std::same_as<std::remove_cvref_t<M>, Sequential>) ||
                        std::convertible_to<M, std::shared_ptr<Module>>;
}  // namespace detail

/// forward(x) = m_{n-1}(...m_1(m_0(x))). An empty Sequential returns its input.
class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  /// `Sequential{std::make_shared<Linear>(4, 8), make_norm("layernorm", 8)}`: shared modules in order.
  Sequential(std::initializer_list<std::shared_ptr<Module>> ms) : Sequential() {
    for (auto& m : ms) push_back(m);
  }
  /// `Sequential{Linear(4, 8), ReLU(), Linear(8, 2)}` (torch.nn.Sequential(...)): modules given by value
  /// are moved into the container; shared_ptrs are shared. Any mix of the two.
  template <class... Ms>
    requires(sizeof...(Ms) > 0 && (detail::SequentialArg<Ms> && ...))
  explicit Sequential(Ms&&... ms) : Sequential() {
    (push_back(as_shared(std::forward<Ms>(ms))), ...);
  }
  Sequential(Sequential&&) = default;
  Sequential& operator=(Sequential&&) = default;
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
  template <class M>
  static std::shared_ptr<Module> as_shared(M&& m) {
    if constexpr (std::derived_from<std::remove_cvref_t<M>, Module>)
      return std::make_shared<std::remove_cvref_t<M>>(std::move(m));
    else
      return std::shared_ptr<Module>(std::forward<M>(m));
  }

  std::vector<std::shared_ptr<Module>> layers_;
};

}  // namespace nl
