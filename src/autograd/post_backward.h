#pragma once
// Post-backward callbacks (PyTorch's Engine.queue_callback): a backward closure that has computed a
// new value of some module state (PowerNorm's E statistic) must not write it into the module's buffer
// while the graph is being walked; it queues a callback instead, and the engine runs every queued
// callback, in queueing order, once the whole backward pass has finished. The callback is where the
// owner (the module) applies the value to its buffer through an in-place op, which bumps the buffer's
// version counter at a well-defined point: after every node of the pass has read what it saved.
#include <functional>

namespace nl {

/// Queues `fn` to run after the current backward pass on this thread has run all its nodes. Throws
/// std::logic_error when called outside a backward pass (only backward closures may call it).
void queue_post_backward(std::function<void()> fn);

/// True while a backward pass runs on this thread (inside a backward closure or a callback).
bool in_backward_pass();

/// RAII, used by Variable::backward: opens the queue of one backward pass. finish() runs the queued
/// callbacks (in order; a throwing callback stops the rest and propagates). Destroying the scope
/// without finish() (the pass threw) drops the queue. Nested passes (a backward inside a callback)
/// get their own queue.
class PostBackwardScope {
 public:
  PostBackwardScope();
  ~PostBackwardScope();
  PostBackwardScope(const PostBackwardScope&) = delete;
  PostBackwardScope& operator=(const PostBackwardScope&) = delete;
  /// Runs and clears the queued callbacks of this pass.
  void finish();
  /// The callbacks of one pass (defined in post_backward.cpp).
  struct Queue;

 private:
  Queue* prev_;
  Queue* mine_;
};

}  // namespace nl
