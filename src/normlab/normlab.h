#pragma once
// normlab's public API in one include, for programs that embed the library (what `#include <torch/torch.h>`
// is to PyTorch users):
//
//   #include "normlab/normlab.h"     // with target_link_libraries(<your target> PRIVATE normlab::normlab)
//
// It brings in tensors and their ops, autograd (Variable, the tape, gradcheck), the nn modules and
// the normalisation layers, optimizers, schedules, clipping and checkpoints, thread control, and the
// data readers and metrics. Left out: data preparation and SentencePiece (data/text/prepare.h,
// data/text/sentencepiece_model.h; part of the full build only, not of -DNORMLAB_LIBRARY_ONLY=ON) and
// backend internals (backends/cpu/*; the thread knob and BLAS kernel check are in backends/runtime.h).

// ---- tensors ----
#include "tensor/device.h"
#include "tensor/dtype.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

// ---- autograd ----
#include "autograd/functions.h"
#include "autograd/gradcheck.h"
#include "autograd/tape.h"
#include "autograd/variable.h"

// ---- layers and normalisation (Xu et al. 2019) ----
#include "nn/models/mnist_cnn.h"
#include "nn/nn.h"
#include "nn/norm/theory.h"

// ---- training ----
#include "optim/accumulate.h"
#include "optim/checkpoint.h"
#include "optim/clip.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"

// ---- runtime ----
#include "backends/backend.h"
#include "backends/profiler.h"
#include "backends/runtime.h"
#include "version.h"

// ---- data readers and metrics ----
#include "data/idx.h"
#include "data/image_dataset.h"
#include "data/metrics/attachment.h"
#include "data/metrics/bleu.h"
#include "data/metrics/scores.h"
#include "data/text/batching.h"
#include "data/text/classification.h"
#include "data/text/conllu.h"
#include "data/text/dictionary.h"
#include "data/text/lm_corpus.h"
#include "data/text/parallel_text.h"
#include "data/text/token_dataset.h"
