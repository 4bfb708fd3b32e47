# Data-parallel training (src/distributed/): the MPI process group is built where CMake finds MPI
# (Debian: libopenmpi-dev, scripts/install-deps.sh --distributed), the NCCL one where the CUDA toolkit and
# NCCL (nccl.h, libnccl) are found. Without them normlab builds as before and `--distributed` explains
# what to install; the MPI tests then report as skipped.
# A library-only build leaves both out unless asked (NL_DEVICES_DEFAULT, top-level CMakeLists.txt).
option(NORMLAB_MPI  "Build the MPI process group (data-parallel training) when MPI is found" ${NL_DEVICES_DEFAULT})
option(NORMLAB_NCCL "Build the NCCL process group when CUDA and NCCL are found" ${NL_DEVICES_DEFAULT})
set(NORMLAB_HAS_MPI OFF)
set(NORMLAB_HAS_NCCL OFF)
if(NORMLAB_MPI)
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    file(GLOB NL_MPI_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/distributed/mpi/*.cpp)
    target_sources(normlab PRIVATE ${NL_MPI_SOURCES})
    target_link_libraries(normlab PUBLIC MPI::MPI_CXX)
    target_compile_definitions(normlab PUBLIC NORMLAB_HAS_MPI=1)
    set(NORMLAB_HAS_MPI ON)
  endif()
endif()
if(NORMLAB_NCCL)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    find_library(NL_NCCL_LIB nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib /usr/local/cuda/lib64)
    find_path(NL_NCCL_INC nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  endif()
  if(CUDAToolkit_FOUND AND NL_NCCL_LIB AND NL_NCCL_INC)
    # A library of its own (normlab::nccl): linking NCCL and cudart into libnormlab would map them in
    # every CPU run (issue 27: CUDA is loaded on first use). Programs that use NcclProcessGroup link it.
    file(GLOB NL_NCCL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/distributed/nccl/*.cpp)
    add_library(normlab_nccl STATIC ${NL_NCCL_SOURCES})
    add_library(normlab::nccl ALIAS normlab_nccl)
    target_include_directories(normlab_nccl PRIVATE ${NL_NCCL_INC})
    target_compile_options(normlab_nccl PRIVATE ${NL_WARN} ${NL_OPT})
    target_link_libraries(normlab_nccl PUBLIC normlab ${NL_NCCL_LIB} CUDA::cudart)
    target_compile_definitions(normlab_nccl PUBLIC NORMLAB_HAS_NCCL=1)
    set(NORMLAB_HAS_NCCL ON)
  endif()
endif()
message(STATUS "normlab distributed: MPI ${NORMLAB_HAS_MPI}, NCCL ${NORMLAB_HAS_NCCL}")
