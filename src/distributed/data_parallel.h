#pragma once
// The model-side pieces of data-parallel training over a ProcessGroup (PyTorch DDP's, without buckets):
// replicate the model from rank 0, all-reduce gradients in one flat buffer per dtype, check that the
// replicas are bit-identical. The design (one in-place all-reduce after backward; bucketing only if a
// profile shows it pays) is ../shared/docs/dist-gpu.md §1.5.
#include <cstdint>
#include <vector>

#include "autograd/variable.h"
#include "distributed/process_group.h"
#include "nn/module.h"

namespace nl::dist {

/// Copies rank 0's parameters (if `parameters`) and float32/float64 buffers (running statistics; if
/// `buffers`) to every rank, in place (int64 buffers such as step counters are not touched). Every rank
/// must hold the same architecture; a rank whose tensor count or sizes differ throws
/// std::invalid_argument.
void broadcast_module(ProcessGroup& pg, Module& m, bool parameters = true, bool buffers = true);

/// Sums the gradients of `params` over all ranks, then multiplies them by `scale` (e.g. 1/total items
/// for a mean over the global batch). One all-reduce per parameter dtype over a flat buffer of all
/// gradients, plus a small one of "has a gradient" flags: a parameter without a gradient on some ranks
/// counts as zeros there; one without a gradient on every rank keeps none (so the optimizer skips it
/// exactly as in a single process). Every rank passes the same parameters in the same order.
void all_reduce_gradients(ProcessGroup& pg, const std::vector<Variable>& params, double scale);

/// FNV-1a 64-bit hash of the bytes of every parameter and buffer of `m` (in state_dict order).
uint64_t module_hash(const Module& m);

/// True when every rank's module_hash equals rank 0's (a collective: every rank must call it).
bool replicas_identical(ProcessGroup& pg, const Module& m);

}  // namespace nl::dist
