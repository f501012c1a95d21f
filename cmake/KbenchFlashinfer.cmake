# FlashInfer's own header-only kernels (from the flashinfer-python 0.7.2.post1 wheel) built as the
# `flashinfer` yardstick backend, library kbench_flashinfer (src/backends/flashinfer). Off by default:
#   KBENCH_WITH_FLASHINFER=1 scripts/deps.sh      (fetches .deps/flashinfer-0.7.2.post1.tar.xz)
#   cmake -DKBENCH_WITH_FLASHINFER=ON ...
# Include after add_subdirectory(src/backends). When ON, targets get KBENCH_HAVE_FLASHINFER=1 by
# linking kbench_flashinfer; when OFF, only KBENCH_FLASHINFER_MISSING_REASON is set.
option(KBENCH_WITH_FLASHINFER "Build FlashInfer's own kernels as the flashinfer yardstick backend" OFF)

set(KBENCH_FLASHINFER_VERSION 0.7.2.post1)
set(KBENCH_FLASHINFER_MISSING_REASON
    "kbench was built without FlashInfer's kernels: configure with -DKBENCH_WITH_FLASHINFER=ON after KBENCH_WITH_FLASHINFER=1 scripts/deps.sh")

if(KBENCH_WITH_FLASHINFER)
  set(KBENCH_FLASHINFER_ROOT "${PROJECT_SOURCE_DIR}/.deps/flashinfer")
  set(_kbench_fi_archive "${PROJECT_SOURCE_DIR}/.deps/flashinfer-${KBENCH_FLASHINFER_VERSION}.tar.xz")
  set(_kbench_fi_probe "${KBENCH_FLASHINFER_ROOT}/include/flashinfer/attention/prefill.cuh")
  if(NOT EXISTS "${_kbench_fi_probe}")
    if(EXISTS "${_kbench_fi_archive}")
      message(STATUS "kbench flashinfer backend: unpacking ${_kbench_fi_archive}")
      # The archive holds one top folder, flashinfer/.
      file(ARCHIVE_EXTRACT INPUT "${_kbench_fi_archive}" DESTINATION "${PROJECT_SOURCE_DIR}/.deps")
    endif()
    if(NOT EXISTS "${_kbench_fi_probe}")
      message(FATAL_ERROR "KBENCH_WITH_FLASHINFER=ON but FlashInfer's headers are missing "
                          "(${KBENCH_FLASHINFER_ROOT} and ${_kbench_fi_archive}): run "
                          "KBENCH_WITH_FLASHINFER=1 scripts/deps.sh")
    endif()
  endif()
  unset(KBENCH_FLASHINFER_MISSING_REASON)
  message(STATUS "kbench flashinfer backend: FlashInfer ${KBENCH_FLASHINFER_VERSION} headers in ${KBENCH_FLASHINFER_ROOT}")
  add_subdirectory("${PROJECT_SOURCE_DIR}/src/backends/flashinfer"
                   "${PROJECT_BINARY_DIR}/src/backends/flashinfer")
endif()
