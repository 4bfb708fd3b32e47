#pragma once
// Node: one recorded op of the autograd graph. It keeps what backward needs and nothing more:
// edges to the nodes that produced its inputs (or to the leaf sinks that accumulate leaf gradients),
// the tensors it saved for backward (with their storage versions) and its backward function, written
// beside the forward in autograd/functions/. It never holds its inputs' or its output's data, so an op
// output that no backward needs is freed as soon as the user's code drops its Variable (PyTorch's
// design: Node::next_edges and AccumulateGrad).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"

namespace nl {

struct Node;

/// A tensor saved for backward together with the storage version it had when saved.
struct SavedTensor {
  Tensor tensor;
  uint64_t version = 0;
  std::string what;  ///< e.g. "input x" — used in the error message
};

/// Backward function: given dL/d(output) and which inputs need a gradient, returns one tensor per
/// input (undefined where not needed). Shapes must equal the inputs' shapes.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_out, const std::vector<bool>& needs)>;

/// Where the gradient for one input of a node goes: the node that produced that input (an op node,
/// or a Detach node, which passes nothing on), or the leaf sink of a leaf that requires grad. Null
/// for an input that needs no gradient (a leaf with requires_grad=false). Nodes have one output, so
/// unlike PyTorch's Edge no output number is needed.
struct Edge {
  std::shared_ptr<Node> node;
};

/// Inside a node's backward function only: the buffer in which the engine has summed the gradients already
/// sent to the node's input `i`, when adding into it in place is safe (an op node's buffer that is the only
/// handle to its storage), else an undefined Tensor. A backward that adds its gradient for input i into
/// this tensor and returns that same tensor saves the engine's separate add pass (LayerNorm's dx into the
/// residual stream's gradient, autograd/functions/layer_norm.cpp); any other returned gradient is added as
/// usual.
Tensor accumulated_gradient(size_t i);

/// One node of the graph: a recorded op (on the tape, with an id) or a leaf sink (not on the tape,
/// id -1) that adds the gradient it receives to its leaf's grad (PyTorch's AccumulateGrad).
struct Node {
  int64_t id = -1;               ///< position on the recording thread's tape; -1 for leaf sinks
  const char* name = "";         ///< op name (a string literal), e.g. "MatMul", "Detach", "LeafSink"
  bool is_detach = false;        ///< a Detach node: backward never runs it, its input gets nothing
  bool released = false;         ///< saved tensors freed by a backward without retain_graph
  std::string note;              ///< extra text for Tape::dump (e.g. "k=0.1")
  std::vector<Edge> next;        ///< one edge per input, in input order
  /// Names of inputs that are named leaves without requires_grad (their edge is null): only for
  /// Tape::dump; (input index, name). Empty in the common case.
  std::vector<std::pair<uint32_t, std::string>> nograd_names;
  std::vector<SavedTensor> saved;
  BackwardFn backward;
  Shape out_shape;               ///< shape of the op's output (what gradients sent to it must have)
  /// Leaf sinks only: the leaf whose grad receives the gradient. The graph keeps the leaf alive (as
  /// PyTorch's AccumulateGrad does); the leaf refers back to its sink weakly, so there is no cycle.
  std::shared_ptr<VariableImpl> leaf;
  /// The variable this node produced, set only once retain_grad() asks for its gradient.
  std::weak_ptr<VariableImpl> output;

  // Scratch state of a running backward pass (see Variable::backward).
  Tensor grad_out;               ///< gradient accumulated for this node's output
  uint64_t visit = 0;            ///< number of the backward pass that last reached this node
  int64_t pending = 0;           ///< consumers that have not yet sent their gradient

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  /// Tears the graph below this node down iteratively: a long chain of nodes that only this one
  /// keeps alive is dismantled with an explicit stack instead of nested destructor calls.
  ~Node();

  /// True for a leaf sink.
  bool is_leaf_sink() const { return leaf != nullptr; }
  /// Throws std::runtime_error if a saved tensor's storage was modified since it was saved.
  void check_versions() const;
  /// Frees saved tensors and the backward closure.
  void release();
};

/// The edge through which a gradient reaches `v`: its producer node (op or Detach), its leaf sink
/// (created on first use and shared by all later uses, held weakly by the leaf), or null when `v` is
/// a leaf that does not require grad.
Edge gradient_edge(const Variable& v);

}  // namespace nl
