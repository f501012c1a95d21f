# CMake < 3.26 knows no C++20 flag for nvcc, so CUDA_STANDARD 20 fails there; nvcc 12+ accepts
# -std=c++20. Included by kbench's build and by kbenchConfig.cmake: CUDA sources that include
# kbench's headers are C++20 too (set(CMAKE_CUDA_STANDARD 20)).
if(CMAKE_VERSION VERSION_LESS 3.26)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
