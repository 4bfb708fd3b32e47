#pragma once
// Umbrella header for src/nn: modules, layers, init, the normalisation layers,
// attention and the Transformer.
#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/conv2d.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/norm/adanorm.h"
#include "nn/norm/factory.h"
#include "nn/norm/layer_norm.h"
#include "nn/norm/no_norm.h"
#include "nn/pooling.h"
#include "nn/sequential.h"
#include "nn/transformer/positions.h"
#include "nn/transformer/transformer.h"
