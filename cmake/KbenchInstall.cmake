# cmake --install BUILD --prefix P: the timing engine as the package kbench (find_package(kbench),
# target kbench::timing): the library, the headers it and its users need, the config and version
# files.
include(CMakePackageConfigHelpers)

set(KBENCH_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/kbench")
install(TARGETS kbench_timing EXPORT kbenchTargets ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(FILES
          "${PROJECT_SOURCE_DIR}/include/kbench/timing.hpp"
          "${PROJECT_SOURCE_DIR}/include/kbench/statistics.hpp"
          "${PROJECT_SOURCE_DIR}/include/kbench/gpu_monitor.hpp"
          # The RAII helpers users time their kernels with (examples/time_my_kernel.cu).
          "${PROJECT_SOURCE_DIR}/include/kbench/cuda_check.hpp"
          "${PROJECT_SOURCE_DIR}/include/kbench/cuda_stream.hpp"
          "${PROJECT_SOURCE_DIR}/include/kbench/device_buffer.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/kbench")
install(EXPORT kbenchTargets NAMESPACE kbench:: DESTINATION "${KBENCH_INSTALL_CMAKEDIR}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/kbenchConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/kbenchConfig.cmake"
                              INSTALL_DESTINATION "${KBENCH_INSTALL_CMAKEDIR}")
# 0.x: a minor version may break the interface.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/kbenchConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/kbenchConfig.cmake" "${PROJECT_BINARY_DIR}/kbenchConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/KbenchCudaCxx20.cmake"
        DESTINATION "${KBENCH_INSTALL_CMAKEDIR}")
