#pragma once
// NL_HOST_DEVICE marks inline functions that the CUDA backend compiles for the device too (nvcc defines
// __CUDACC__); for the host compiler it is empty.
#if defined(__CUDACC__)
#define NL_HOST_DEVICE __host__ __device__
#else
#define NL_HOST_DEVICE
#endif
