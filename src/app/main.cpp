// kbench: FlashInfer's flashinfer_benchmark.py command lines, in C++, on kbench's own kernels.
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "core/compare.hpp"
#include "core/runner.hpp"
#include "routines/builtin_routines.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> tokens(argv + 1, argv + argc);
  if (!tokens.empty() && tokens.front() == "compare") {
    return kbench::compare_main(std::span(tokens).subspan(1), std::cout);
  }
  return kbench::kbench_main(tokens, kbench::make_builtin_registry(), std::cout);
}
