// What every GPU test of a GEMM backend checks on one line: kbench's refcheck (core's Verifier: the
// fp32 reference kernel, the output poisoned, one call, the routine's rule), the second input set's
// own operands, and a CUDA-graph replay of launch() writing what the eager call wrote.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/host_tensor.hpp"
#include "core/verify.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_stream.hpp"
#include "routines/builtin_routines.hpp"
#include "routines/gemm/gemm_case.hpp"

#include "case_from_line.hpp"

namespace kbench::testing {

struct GemmLine {
  const char* routine;
  const char* flags;
};

// Builds the line's case with two input sets, binds the routine's backend `backend_name`, refchecks a call
// and replays both sets' calls from a CUDA graph; prints the reason instead where the backend does
// not take the case on this GPU.
inline void expect_gemm_backend_passes(const std::string& backend_name, const GemmLine& line) {
  SCOPED_TRACE(std::string(line.routine) + " " + line.flags);
  const kbench::RoutineRegistry registry = kbench::make_builtin_registry();
  std::unique_ptr<Case> problem =
      case_from_line(registry, std::string("-R ") + line.routine + " " + line.flags);
  const kbench::Backend* backend = registry.find(line.routine)->find_backend(backend_name);
  ASSERT_NE(backend, nullptr);
  const kbench::Support support = backend->can_implement(*problem);
  if (!support) {
    std::cout << "[ " << backend_name << " NOT RUN ] " << line.routine << " " << line.flags << ": " << support.reason << "\n";
    return;
  }
  kbench::CudaStream stream;
  problem->allocate(2, 42, stream.get());
  std::unique_ptr<kbench::Operation> operation = backend->prepare(*problem, stream.get());
  kbench::Verifier verifier(*problem);
  const kbench::RefcheckResult first = verifier.check(*operation, stream.get());
  for (const kbench::Comparison& c : first.comparisons) {
    EXPECT_EQ(c.mismatches, 0) << c.tensor << ": " << c.mismatches << "/" << c.total << " " << c.rule << " max abs error "
                               << c.max_abs_error;
  }
  EXPECT_TRUE(first.passed());
  // The second input set: its own operands and scales (launch picks them by copy).
  const auto& gemm = static_cast<const kbench::GemmCase&>(*problem);
  const kbench::GemmOperands o0 = gemm.operands(0), o1 = gemm.operands(1);
  EXPECT_NE(o0.a, o1.a);
  EXPECT_NE(o0.out, o1.out);
  // A graph replay of both copies writes the same output as the eager call (inputs unchanged).
  const std::size_t out_count = static_cast<std::size_t>(gemm.problem().out_elements());
  const DType out_dtype = gemm.problem().out_dtype;
  const std::vector<float> eager = kbench::read_as_floats(o0.out, out_dtype, out_count, stream.get());
  KBENCH_CUDA_CHECK(cudaMemsetAsync(o0.out, 0xFF, out_count * kbench::dtype_size(out_dtype), stream.get()));
  const cudaError_t status = capture_and_replay(stream.get(), 2, [&] {
    operation->launch(stream.get(), 1);
    operation->launch(stream.get(), 0);
    return cudaGetLastError();
  });
  ASSERT_EQ(status, cudaSuccess);
  const std::vector<float> replayed = kbench::read_as_floats(o0.out, out_dtype, out_count, stream.get());
  EXPECT_EQ(std::memcmp(eager.data(), replayed.data(), eager.size() * sizeof(float)), 0);
}

}  // namespace kbench::testing
