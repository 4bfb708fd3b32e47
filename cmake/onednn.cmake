# oneDNN (Debian's libdnnl-dev, installed by scripts/install-deps.sh) runs the CPU's bfloat16 matrix
# products (src/backends/cpu/cpu_bf16_gemm.cpp). Found by header and library rather than its CMake package,
# whose config demands the OpenCL headers of its GPU runtime, which normlab does not use. Without it
# normlab builds as before and bfloat16 products say that oneDNN is missing.
#   -DNORMLAB_ONEDNN=OFF   never use it (to check the build without it)
option(NORMLAB_ONEDNN "Use oneDNN (libdnnl-dev) for bfloat16 products on the CPU when found" ON)
set(NORMLAB_HAS_ONEDNN OFF)
if(NORMLAB_ONEDNN)
  find_path(NL_DNNL_INC oneapi/dnnl/dnnl.hpp)
  find_library(NL_DNNL_LIB dnnl)
  if(NL_DNNL_INC AND NL_DNNL_LIB)
    file(STRINGS ${NL_DNNL_INC}/oneapi/dnnl/dnnl_version.h NL_DNNL_VERSION_LINES REGEX "#define DNNL_VERSION_(MAJOR|MINOR|PATCH)")
    string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*PATCH ([0-9]+).*" "\\1.\\2.\\3" NL_DNNL_VERSION
           "${NL_DNNL_VERSION_LINES}")
    if(NL_DNNL_VERSION VERSION_LESS 2.5 OR NL_DNNL_VERSION VERSION_GREATER_EQUAL 3.0)
      message(WARNING "oneDNN ${NL_DNNL_VERSION} found; normlab uses the 2.x API (2.5 or later, Debian 12 has "
                      "2.6.3): building without it")
    else()
      set(NORMLAB_HAS_ONEDNN ON)
      target_include_directories(normlab PRIVATE ${NL_DNNL_INC})
      target_link_libraries(normlab PUBLIC ${NL_DNNL_LIB})
      set_property(SOURCE src/backends/cpu/cpu_bf16_gemm.cpp APPEND PROPERTY COMPILE_DEFINITIONS NORMLAB_WITH_ONEDNN=1)
    endif()
  endif()
endif()
if(NORMLAB_HAS_ONEDNN)
  message(STATUS "normlab oneDNN: ON (${NL_DNNL_VERSION}, ${NL_DNNL_LIB}): bfloat16 products on the CPU")
else()
  message(STATUS "normlab oneDNN: OFF (NORMLAB_ONEDNN=${NORMLAB_ONEDNN}; install libdnnl-dev for bfloat16 products)")
endif()
