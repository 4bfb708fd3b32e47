#include "tasks/builtin.h"

#include "tasks/cls/cls_task.h"
#include "tasks/lm/lm_task.h"
#include "tasks/lnnet/lnnet_task.h"
#include "tasks/mnist.h"
#include "tasks/mt/mt_task.h"
#include "tasks/parse/parse_task.h"
#include "tasks/resnet_cifar/resnet_cifar_task.h"
#include "tasks/vit_cifar/vit_cifar_task.h"

namespace nlapp {

std::vector<TaskEntry> builtin_tasks() {
  return {
      {"mnist", "Xu et al. 2019 MNIST CNN (conv-pool-conv-pool-linear-norm-ReLU-linear)", make_mnist_task},
      {"cls", "Xu et al. 2019 text classification (SST-5, RT): Transformer encoder, mean pooling", make_cls_task},
      {"mt", "Transformer machine translation (Xu et al. 2019 MT columns) on a prepared corpus", make_mt_task},
      {"parse", "Chen & Manning 2014 MLP dependency parser (Xu et al. 2019 parsing column, appendix A.4)", make_parse_task},
      {"lnnet", "Ni et al. 2024 LN-Net / linear baselines on random labels (capacity: training accuracy)", make_lnnet_task},
      {"lm", "Transformer-XL style language model: PTB words (PPL) or characters (BPC; tinyshakespeare stands in for Enwiki8)", make_lm_task},
      {"resnet-cifar", "Ni et al. 2024 CIFAR ResNet-20 without ReLU, norm as the only nonlinearity", make_resnet_cifar_task},
      {"vit-cifar", "Ni et al. 2024 Tiny-ViT on CIFAR-10 (patch 4, d 192, 6 layers, 3 heads), any norm", make_vit_cifar_task},
  };
}

}  // namespace nlapp
