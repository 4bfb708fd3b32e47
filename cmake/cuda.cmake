# CUDA backend (src/backends/cuda/): built when NORMLAB_CUDA=ON (the default) and check_language finds
# nvcc (on PATH or /usr/local/cuda/bin/nvcc). Without nvcc, normlab is CPU-only and builds exactly as
# before; the CUDA tests then skip (they also skip on a machine with nvcc but no GPU).
#   -DNORMLAB_CUDA=OFF                       never build it
#   -DCMAKE_CUDA_ARCHITECTURES="80;90"       targets (default 80;86;89;90: A100, A10/3090, L4/L40/4090, H100/H200;
#                                            each entry is machine code plus PTX, so newer GPUs JIT the last)
# The kernels live in a module of their own, libnormlab_cuda.so (the only image linked against cudart and
# cuBLAS), written beside the normlab executable and installed into <prefix>/lib. libnormlab (static)
# holds a loader (src/backends/cuda_loader.cpp) that opens it with dlopen on the first use of a CUDA device,
# so a CPU run maps neither library. A program that links libnormlab.a statically finds the module through
# $NORMLAB_CUDA_MODULE, beside its executable, in the build or install directory of this configure, or on
# the library path (docs/cuda.md). The module carries private copies of the few backend sources it derives
# from (backend.cpp, block_pool.cpp, composite/), compiled position-independent with hidden visibility.
# CMake 3.25 cannot set CUDA_STANDARD 20 for nvcc (and, with CUDA_STANDARD unset, derives CUDA20 from
# the global CXX_STANDARD 20 and fails), so the .cu files are compiled as C++17 (workaround A of
# /work/shared/docs/dist-gpu.md §3): they and the headers they include (backends/desc.h,
# fused_kernels.h, backend.h, coalesce.h, elementwise_math.h, cpu/counter_rng.h, tensor/dtype.h,
# tensor/device.h, composite/) must stay C++17-clean. The .cpp files of the backend are C++20 as usual.
include(CheckLanguage)
set(NORMLAB_HAS_CUDA OFF)
if(NORMLAB_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  file(GLOB_RECURSE NL_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/backends/cuda/*.cu
                                                     ${CMAKE_CURRENT_SOURCE_DIR}/src/backends/cuda/*.cpp)
  if(CMAKE_CUDA_COMPILER AND NL_CUDA_SOURCES)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;86;89;90" CACHE STRING
          "CUDA architectures (each: machine code + PTX); 90 alone for an H100/H200-only build")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # One id per build folder (kept in the cache, so a re-configure does not relink everything), shared by
    # the loader and the module: a module from another build is refused.
    if(NOT NL_BUILD_ID)
      string(RANDOM LENGTH 16 NL_RANDOM_ID)
      set(NL_BUILD_ID "${PROJECT_VERSION}-${NL_RANDOM_ID}" CACHE INTERNAL "id shared by libnormlab's CUDA loader and libnormlab_cuda.so")
    endif()
    file(GLOB NL_CUDA_COMMON_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/src/backends/backend.cpp
                                     ${CMAKE_CURRENT_SOURCE_DIR}/src/backends/block_pool.cpp
                                     ${CMAKE_CURRENT_SOURCE_DIR}/src/backends/composite/*.cpp)
    add_library(normlab_cuda MODULE ${NL_CUDA_SOURCES} ${NL_CUDA_COMMON_SOURCES})
    target_include_directories(normlab_cuda PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
    target_compile_options(normlab_cuda PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall>
      $<$<COMPILE_LANGUAGE:CXX>:${NL_WARN}> $<$<CONFIG:Release>:-O3>)
    string(REPLACE ";" "," NL_CUDA_ARCH_LIST "${CMAKE_CUDA_ARCHITECTURES}")  # a ';' would split the definition
    target_compile_definitions(normlab_cuda PRIVATE NORMLAB_WITH_CUDA=1 NORMLAB_BUILD_ID="${NL_BUILD_ID}"
                               NORMLAB_CUDA_ARCHITECTURES="${NL_CUDA_ARCH_LIST}")
    target_link_libraries(normlab_cuda PRIVATE CUDA::cudart CUDA::cublas nlohmann_json::nlohmann_json)
    target_link_options(normlab_cuda PRIVATE -Wl,-Bsymbolic -Wl,--no-undefined)
    set_target_properties(normlab_cuda PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
                          CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}" CUDA_RUNTIME_LIBRARY Shared
                          POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden
                          CUDA_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                          LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
    # The loader, in libnormlab: no CUDA headers or libraries, only libdl.
    target_sources(normlab PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/backends/cuda_loader.cpp)
    set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/backends/cuda_loader.cpp PROPERTIES
      COMPILE_DEFINITIONS "NORMLAB_BUILD_ID=\"${NL_BUILD_ID}\";NORMLAB_CUDA_MODULE_BUILD_DIR=\"${CMAKE_BINARY_DIR}\";NORMLAB_CUDA_MODULE_INSTALL_DIR=\"${CMAKE_INSTALL_PREFIX}/lib\"")
    target_link_libraries(normlab PUBLIC ${CMAKE_DL_LIBS})
    target_compile_definitions(normlab PUBLIC NORMLAB_WITH_CUDA=1)
    add_dependencies(normlab normlab_cuda)  # every program that links normlab finds the module built
    install(TARGETS normlab_cuda LIBRARY DESTINATION lib)
    set(NORMLAB_HAS_CUDA ON)
  endif()
endif()
if(NORMLAB_HAS_CUDA)
  message(STATUS "normlab CUDA backend: ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}, "
                 "module libnormlab_cuda.so loaded on first use)")
else()
  message(STATUS "normlab CUDA backend: OFF (NORMLAB_CUDA=${NORMLAB_CUDA}, nvcc: ${CMAKE_CUDA_COMPILER})")
endif()
