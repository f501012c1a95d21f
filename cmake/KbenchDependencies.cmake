# Every dependency comes from a Debian package or a PyPI wheel. scripts/deps.sh unpacks them into .deps, which
# is searched first so the same tree builds on machines without a package registry (the device).
set(KBENCH_DEPS_ROOT "${PROJECT_SOURCE_DIR}/.deps/root" CACHE PATH "Unpacked dependency packages")
if(EXISTS "${KBENCH_DEPS_ROOT}/usr")
  list(PREPEND CMAKE_PREFIX_PATH "${KBENCH_DEPS_ROOT}/usr")
endif()

find_package(CUDAToolkit REQUIRED)
find_package(CLI11 2.1 CONFIG REQUIRED)
find_package(nlohmann_json 3.10 CONFIG REQUIRED)
if(KBENCH_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()

# CUPTI: the toolkit ships it; CUDA::cupti is defined by FindCUDAToolkit when found.
if(NOT TARGET CUDA::cupti)
  message(FATAL_ERROR "CUPTI was not found in the CUDA toolkit at ${CUDAToolkit_LIBRARY_ROOT}")
endif()

# CUTLASS/CuTe headers (header-only) from the nvidia-cutlass wheel, unpacked by scripts/deps.sh into
# .deps/cutlass/include; the Hopper prefill kernels build on CuTe's TMA and wgmma atoms.
find_path(KBENCH_CUTLASS_INCLUDE_DIR cute/tensor.hpp
  HINTS "${PROJECT_SOURCE_DIR}/.deps/cutlass/include"
  DOC "CUTLASS/CuTe include folder (run scripts/deps.sh)")
if(NOT KBENCH_CUTLASS_INCLUDE_DIR)
  message(FATAL_ERROR "CUTLASS/CuTe headers not found: run scripts/deps.sh or set KBENCH_CUTLASS_INCLUDE_DIR")
endif()
add_library(kbench_cutlass_headers INTERFACE)
# SYSTEM: CUTLASS's own warnings stay out of kbench's build log.
target_include_directories(kbench_cutlass_headers SYSTEM INTERFACE "${KBENCH_CUTLASS_INCLUDE_DIR}")

# NCCL, for the multi-GPU routines (src/dist): optional. CUDA 13's toolkit bundles it; a machine
# with only the runtime library (libnccl.so.2, no header) gets nccl.h from scripts/deps.sh, which
# unpacks it from the nvidia-nccl-cu13 wheel into .deps/nccl/include. Without NCCL, kbench builds and
# a multi-process run says it was built without NCCL.
find_path(KBENCH_NCCL_INCLUDE_DIR nccl.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} "${PROJECT_SOURCE_DIR}/.deps/nccl/include" /usr/include
  DOC "Folder of nccl.h (scripts/deps.sh unpacks one into .deps/nccl/include)")
get_filename_component(_kbench_toolkit_lib "${CUDAToolkit_LIBRARY_DIR}/../lib" ABSOLUTE)
# libnccl.so.2 by name too: a runtime-only install has no libnccl.so link.
find_library(KBENCH_NCCL_LIBRARY NAMES nccl libnccl.so.2
  HINTS ${CUDAToolkit_LIBRARY_DIR} "${_kbench_toolkit_lib}" "${CUDAToolkit_LIBRARY_ROOT}/lib64" /usr/lib/x86_64-linux-gnu
  DOC "The NCCL library")
if(KBENCH_NCCL_INCLUDE_DIR AND KBENCH_NCCL_LIBRARY)
  set(KBENCH_HAVE_NCCL ON)
  file(STRINGS "${KBENCH_NCCL_INCLUDE_DIR}/nccl.h" _kbench_nccl_version REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE "[^0-9;]" "" _kbench_nccl_version "${_kbench_nccl_version}")
  string(REPLACE ";" "." _kbench_nccl_version "${_kbench_nccl_version}")
  get_filename_component(_kbench_nccl_real "${KBENCH_NCCL_LIBRARY}" REALPATH)
  message(STATUS "kbench NCCL: nccl.h ${_kbench_nccl_version} in ${KBENCH_NCCL_INCLUDE_DIR}, library "
                 "${KBENCH_NCCL_LIBRARY} (${_kbench_nccl_real})")
  add_library(kbench::nccl UNKNOWN IMPORTED)
  set_target_properties(kbench::nccl PROPERTIES
    IMPORTED_LOCATION "${KBENCH_NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${KBENCH_NCCL_INCLUDE_DIR}")
else()
  set(KBENCH_HAVE_NCCL OFF)
  message(STATUS "kbench NCCL: not found (nccl.h: ${KBENCH_NCCL_INCLUDE_DIR}, library: ${KBENCH_NCCL_LIBRARY}); "
                 "multi-process runs are left out (scripts/deps.sh fetches nccl.h)")
endif()
