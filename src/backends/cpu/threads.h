#pragma once
// One thread knob for the whole process: OpenMP's team size and OpenBLAS's thread count are set
// together, so our loops and BLAS never oversubscribe the cores.
namespace nl {

/// Sets the number of threads used by normlab's loops and by OpenBLAS (n >= 1).
void set_num_threads(int n);
/// Current thread count (default: OMP_NUM_THREADS if set, else 1).
int get_num_threads();

/// Minimum elements per loop before OpenMP is used (smaller loops run on one thread).
constexpr long kParallelGrain = 32768;

}  // namespace nl
