#pragma once
// Task "lnnet": the capacity experiment of Ni et al. 2024 (§5.1 of ../shared/docs/ni-pn-details.md):
// an LN-Net (Linear -> norm, no activation; nn/models/ln_net.h) fitting random labels (MNIST-RL,
// CIFAR-10-RL), with training accuracy as the capacity measure; the baselines are the same shapes
// with --norm none (a linear network) and --depth 0 (a linear classifier); --norm lng --groups G is LN-G.
// Validation (which picks checkpoint_best) reports "train_acc": the accuracy on the whole training
// subset in eval mode; "acc" is the validation split's accuracy (chance under random labels).
#include <memory>

#include "engine/task.h"

namespace nlapp {

/// A new lnnet task (see the file comment).
std::unique_ptr<Task> make_lnnet_task();

}  // namespace nlapp
