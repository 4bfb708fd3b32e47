#include "tasks/builtin.h"

#include "tasks/cls/cls_task.h"
#include "tasks/mnist.h"
#include "tasks/mt/mt_task.h"
#include "tasks/parse/parse_task.h"

namespace nlapp {

std::vector<TaskEntry> builtin_tasks() {
  return {
      {"mnist", "Xu et al. 2019 MNIST CNN (conv-pool-conv-pool-linear-norm-ReLU-linear)", make_mnist_task},
      {"cls", "Xu et al. 2019 text classification (SST-5, RT): Transformer encoder, mean pooling", make_cls_task},
      {"mt", "Transformer machine translation (Xu et al. 2019 MT columns) on a prepared corpus", make_mt_task},
      {"parse", "Chen & Manning 2014 MLP dependency parser (Xu et al. 2019 parsing column, appendix A.4)", make_parse_task},
  };
}

}  // namespace nlapp
