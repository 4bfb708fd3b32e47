// Post-backward callbacks: a per-thread stack of queues, one per running backward pass.
#include "autograd/post_backward.h"

#include <stdexcept>
#include <vector>

namespace nl {

struct PostBackwardScope::Queue {
  std::vector<std::function<void()>> fns;
};

namespace {
thread_local PostBackwardScope::Queue* t_queue = nullptr;
}

void queue_post_backward(std::function<void()> fn) {
  if (!t_queue)
    throw std::logic_error("queue_post_backward: called outside a backward pass; only a backward closure may "
                           "queue a post-backward callback");
  t_queue->fns.push_back(std::move(fn));
}

bool in_backward_pass() { return t_queue != nullptr; }

PostBackwardScope::PostBackwardScope() : prev_(t_queue), mine_(new Queue) { t_queue = mine_; }

PostBackwardScope::~PostBackwardScope() {
  t_queue = prev_;
  delete mine_;
}

void PostBackwardScope::finish() {
  // Callbacks run while the queue is still open, so one may queue another (it runs in this loop too).
  for (size_t i = 0; i < mine_->fns.size(); ++i) {
    auto fn = std::move(mine_->fns[i]);
    fn();
  }
  mine_->fns.clear();
}

}  // namespace nl
