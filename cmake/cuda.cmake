# CUDA backend (src/backends/cuda/): built when NORMLAB_CUDA=ON (the default) and check_language finds
# nvcc (on PATH or /usr/local/cuda/bin/nvcc). Without nvcc, normlab is CPU-only and builds exactly as
# before; the CUDA tests then skip (they also skip on a machine with nvcc but no GPU).
#   -DNORMLAB_CUDA=OFF                       never build it
#   -DCMAKE_CUDA_ARCHITECTURES="80;90"       targets (default 90 = sm_90 code + compute_90 PTX fallback)
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
      set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures (90 = sm_90 + compute_90 PTX)")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # An OBJECT library folded into libnormlab: registry.cpp calls cuda::backend() directly, so a static
    # link keeps the backend (no static-initialiser registration that the linker could drop).
    add_library(normlab_cuda OBJECT ${NL_CUDA_SOURCES})
    target_include_directories(normlab_cuda PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
    target_compile_options(normlab_cuda PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall>
      $<$<COMPILE_LANGUAGE:CXX>:${NL_WARN}> $<$<CONFIG:Release>:-O3>)
    target_compile_definitions(normlab_cuda PRIVATE NORMLAB_WITH_CUDA=1)
    target_link_libraries(normlab_cuda PRIVATE CUDA::cudart CUDA::cublas nlohmann_json::nlohmann_json)
    # normlab was created before enable_language(CUDA), so its CUDA_ARCHITECTURES is set here.
    set_target_properties(normlab_cuda normlab PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                                                          CUDA_EXTENSIONS OFF
                                                          CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
    target_sources(normlab PRIVATE $<TARGET_OBJECTS:normlab_cuda>)
    target_link_libraries(normlab PUBLIC CUDA::cudart CUDA::cublas)
    target_compile_definitions(normlab PUBLIC NORMLAB_WITH_CUDA=1)
    set(NORMLAB_HAS_CUDA ON)
  endif()
endif()
if(NORMLAB_HAS_CUDA)
  message(STATUS "normlab CUDA backend: ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "normlab CUDA backend: OFF (NORMLAB_CUDA=${NORMLAB_CUDA}, nvcc: ${CMAKE_CUDA_COMPILER})")
endif()
