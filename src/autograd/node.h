#pragma once
// Node: one recorded op on the tape — its inputs, the tensors it saved for backward (with their
// storage versions) and its backward function, written beside the forward in autograd/functions/.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/variable.h"

namespace nl {

/// A tensor saved for backward together with the storage version it had when saved.
struct SavedTensor {
  Tensor tensor;
  uint64_t version = 0;
  std::string what;  ///< e.g. "input x" — used in the error message
};

/// Backward function: given dL/d(output) and which inputs need a gradient, returns one tensor per
/// input (undefined where not needed). Shapes must equal the inputs' shapes.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_out, const std::vector<bool>& needs)>;

/// One recorded op: inputs, saved tensors (with versions) and the backward closure.
struct Node {
  int64_t id = 0;                ///< position on the tape (recording order)
  std::string name;              ///< op name, e.g. "MatMul", "Detach"
  bool is_detach = false;        ///< a Detach node: its backward sends nothing to its input
  std::string note;              ///< extra text for Tape::dump (e.g. "k=0.1")
  std::vector<std::shared_ptr<VariableImpl>> inputs;
  std::vector<SavedTensor> saved;
  BackwardFn backward;
  Shape out_shape;
  DType out_dtype = DType::Float32;
  Tensor grad_out;               ///< accumulated during a backward pass
  std::weak_ptr<VariableImpl> output;  ///< the variable this node produced (for retain_grad)
  bool released = false;         ///< saved tensors freed by a backward without retain_graph

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  /// Tears the graph below this node down iteratively: a long chain of nodes that only this one
  /// keeps alive is dismantled with an explicit stack instead of nested destructor calls.
  ~Node();

  /// Records `t` as saved for backward (its current version) and returns it.
  const Tensor& save(const Tensor& t, std::string what);
  /// Throws std::runtime_error if a saved tensor's storage was modified since it was saved.
  void check_versions() const;
  /// Frees saved tensors and the backward closure.
  void release();
};

}  // namespace nl
