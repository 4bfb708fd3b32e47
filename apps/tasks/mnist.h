#pragma once
// Task "mnist": the CNN of Xu et al. 2019 (appendix A.3) on MNIST-format images (default:
// Fashion-MNIST from Debian's dataset-fashion-mnist; --data ../shared/data/mnist for the original),
// 55,000 / 5,000 / 10,000 split, Adam lr 1e-3, batch 32, 20 epochs, AdaNorm C = 2.
#include <memory>

#include "engine/task.h"

namespace nlapp {

/// Default data folder: Fashion-MNIST from the Debian package dataset-fashion-mnist.
inline const char* kDefaultMnistData = "/usr/share/datasets/fashion-mnist";

/// A new MNIST task (see the file comment).
std::unique_ptr<Task> make_mnist_task();

}  // namespace nlapp
