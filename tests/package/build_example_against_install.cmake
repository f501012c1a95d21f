# ctest Package.ExampleBuildsAgainstInstalledTiming: installs kbench's build to a fresh prefix and
# builds examples/ out of tree against it with find_package(kbench) and kbench::timing. It only
# compiles and links: the example needs a GPU to run.
# Arguments (-D): BUILD_DIR, WORK_DIR, EXAMPLE_DIR, GENERATOR, CUDA_COMPILER, CUDA_ARCHITECTURES
# (comma-separated: a semicolon would split the test's command line).
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${output}")
  endif()
  message(STATUS "${what}: done")
endfunction()

function(expect_one_file pattern)
  file(GLOB_RECURSE found "${WORK_DIR}/prefix/${pattern}")
  list(LENGTH found count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "the install holds ${count} files matching ${pattern} (expected 1): ${found}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
run_step("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
foreach(installed include/kbench/timing.hpp include/kbench/statistics.hpp include/kbench/device_buffer.hpp
                  libkbench_timing.a kbenchConfig.cmake kbenchConfigVersion.cmake kbenchTargets.cmake)
  expect_one_file("*${installed}")
endforeach()

string(REPLACE "," ";" architectures "${CUDA_ARCHITECTURES}")
run_step("configure examples/ against the install"
         "${CMAKE_COMMAND}" -S "${EXAMPLE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
         "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}"
         "-DCMAKE_CUDA_ARCHITECTURES=${architectures}")
run_step("build examples/" "${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
if(NOT EXISTS "${WORK_DIR}/build/time_my_kernel")
  message(FATAL_ERROR "the build left no ${WORK_DIR}/build/time_my_kernel")
endif()
