#pragma once
// <immintrin.h> for a source file whose kernels are written with AVX-512 intrinsics. GCC 12's AVX-512
// intrinsics fill their "undefined" operands with a self-initialised variable, which -Wmaybe-uninitialized
// reports wherever they are inlined (GCC bug 105593). The warning is located in the intrinsics' header, so
// it is silenced for the rest of the including file: include this first, before anything that may
// include <immintrin.h>.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#if defined(__x86_64__)
#include <immintrin.h>
#endif
