// kbench: FlashInfer's flashinfer_benchmark.py command lines, in C++, on kbench's own kernels.
#include <iostream>
#include <string>
#include <vector>

#include "core/runner.hpp"
#include "routines/builtin_routines.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> tokens(argv + 1, argv + argc);
  return kbench::kbench_main(tokens, kbench::make_builtin_registry(), std::cout);
}
