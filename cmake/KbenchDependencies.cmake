# Every dependency comes from a Debian package. scripts/deps.sh unpacks them into .deps/root, which
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
