#pragma once
// One thread knob for the whole process: OpenMP's team size and OpenBLAS's thread count are set
// together (set_num_threads / get_num_threads, declared in the public backends/runtime.h), so our loops
// and BLAS never oversubscribe the cores.
#include "backends/runtime.h"

namespace nl {

/// Minimum elements per loop before OpenMP is used (smaller loops run on one thread).
constexpr long kParallelGrain = 32768;

}  // namespace nl
