#pragma once
// Task "vit-cifar": the slides' "Tiny-ViT on CIFAR-10" row of Ni et al. 2024 (LN 88.81% vs LN-G 89.26%
// test accuracy; ../shared/docs/ni-pn-details.md §5.3): the small Vision Transformer of
// nn/models/vit.h (patch 4, d 192, 6 layers, 3 heads, pre-norm, class token) on the CIFAR-10 image task
// base (tasks/image_task.h: data settings, random crop + flip, accuracy), with --norm any name of the
// norm factory in every norm slot (--groups G for lng). Validation accuracy picks checkpoint_best;
// results report its test accuracy next to the slides' number.
#include <memory>
#include <string>

#include "engine/task.h"

namespace nlapp {

/// A new vit-cifar task (see the file comment).
std::unique_ptr<Task> make_vit_cifar_task();

}  // namespace nlapp
