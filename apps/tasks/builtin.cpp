#include "tasks/builtin.h"

#include "tasks/mnist.h"

namespace nlapp {

std::vector<TaskEntry> builtin_tasks() {
  return {
      {"mnist", "Xu et al. 2019 MNIST CNN (conv-pool-conv-pool-linear-norm-ReLU-linear)", make_mnist_task},
  };
}

}  // namespace nlapp
