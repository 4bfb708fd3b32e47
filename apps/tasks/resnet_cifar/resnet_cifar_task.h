#pragma once
// Task "resnet-cifar": Ni et al. 2024's "ResNet without ReLU on CIFAR-10" (slides; notes §5.2): the CIFAR
// ResNet of nn/models/resnet_cifar.h (ResNet-20 by default, --depth 6n+2) with every ReLU removed and
// --norm one of batchnorm, instancenorm, layernorm, groupnorm, lng (LN-G-Position), none; --groups G for
// groupnorm and lng. Validation accuracy picks checkpoint_best; results report its train and test accuracy
// next to the slides' table.
#include <memory>
#include <string>

#include "engine/task.h"

namespace nlapp {

/// A new resnet-cifar task (see the file comment).
std::unique_ptr<Task> make_resnet_cifar_task();

}  // namespace nlapp
