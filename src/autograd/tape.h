#pragma once
// The tape: the thread-local, ordered record of differentiable ops. Every op that has an input
// requiring grad appends one Node; `detach` appends a Detach node so the cut in gradient flow is
// visible. The tape only lists nodes (for Tape::dump); backward() follows the graph's edges from the
// loss in dependency order (autograd/backward.cpp). The tape holds weak references: nodes live as
// long as the variables (and downstream nodes) that need them, and the tape drops its entries of dead
// nodes as it records, so a user's own training loop (no Tape::clear()) keeps it at the size of the
// live graph (at most 2 x live + 64 entries).
#include <memory>
#include <string>
#include <vector>

#include "autograd/node.h"

namespace nl {

/// Thread-local record of differentiable ops in execution order (see the file comment).
class Tape {
 public:
  /// The calling thread's tape.
  static Tape& current();
  /// Appends a node (assigns its id).
  void record(const std::shared_ptr<Node>& n);
  /// Live nodes in recording order.
  std::vector<std::shared_ptr<Node>> nodes() const;
  /// Human-readable listing: one line per live node with its id, op, inputs (leaf names or node ids),
  /// output shape; Detach nodes are marked "[detach: gradient stops here]".
  std::string dump() const;
  /// Forgets every node recorded so far (the nodes stay alive while variables reference them).
  void clear();
  /// Number of live nodes.
  size_t size() const;
  /// Entries the tape holds, live or not yet dropped: at most 2 x (live nodes at the last compaction) + 64.
  size_t entries() const { return nodes_.size(); }

 private:
  std::vector<std::weak_ptr<Node>> nodes_;
  size_t compact_at_ = 64;  // entries at which record() next drops the dead ones
  int64_t next_id_ = 0;
};

/// A constant as the tape prints it (Node::note): 6 significant digits in %g form, so that an eps of 1e-8
/// reads "1e-08", not "0.000000".
std::string note_number(double v);

/// True while recording is on for this thread (the default).
bool grad_enabled();

/// RAII: turns recording off for this thread (inference, optimizer updates), restoring on exit.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

/// For op implementers: wraps `out` as the result of op `name`. If recording is on and any input
/// requires grad, records a Node with `backward` (and the saved tensors in `saved`) and returns a
/// non-leaf Variable; otherwise returns a plain Variable.
Variable make_result(Tensor out, const char* name, const std::vector<Variable>& inputs, BackwardFn backward,
                     std::vector<SavedTensor> saved = {}, std::string note = {});

/// Saves a tensor for backward with its current version (use in make_result's `saved`).
/// Rule for op implementers: every tensor a backward closure captures must also be passed in
/// `saved`, so that version checks and graph_held_bytes (autograd/memory.h) see it.
SavedTensor saved(const Tensor& t, std::string what);

/// For op implementers building a Node by hand (as detach does): sets n.next to one gradient edge per
/// input (see gradient_edge) and remembers the names of named no-grad leaves for Tape::dump.
void set_inputs(Node& n, const std::vector<Variable>& inputs);

}  // namespace nl
