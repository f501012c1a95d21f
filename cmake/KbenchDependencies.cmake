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
