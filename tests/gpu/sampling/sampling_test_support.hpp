// Shared by the sampling family's GPU tests: cases built from command lines as kbench builds them,
// the backends of a routine that run here, and one refcheck or one call of a backend.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/device_info.hpp"
#include "core/registry.hpp"
#include "core/shell_words.hpp"
#include "core/verify.hpp"
#include "kbench/cuda_check.hpp"
#include "routines/builtin_routines.hpp"
#include "routines/sampling/sampling_case.hpp"

namespace kbench::testing {

inline const RoutineRegistry& registry() {
  static const RoutineRegistry r = make_builtin_registry();
  return r;
}

inline const Routine& routine_of(const std::string& line) {
  const CaseArgs args = parse_case(split_shell_words(line), registry());
  return *registry().find(args.routine());
}

// The case of `line` ("--routine ... flags"), its tensors allocated (one input set) from `seed`.
inline std::unique_ptr<SamplingCase> make_sampling_case(const std::string& line, cudaStream_t stream,
                                                        uint64_t seed = 42) {
  const CaseArgs args = parse_case(split_shell_words(line), registry());
  std::unique_ptr<Case> c = registry().find(args.routine())->make_case(args);
  auto* sampling = dynamic_cast<SamplingCase*>(c.get());
  if (sampling == nullptr) throw std::logic_error("not a sampling routine: " + line);
  c.release();
  std::unique_ptr<SamplingCase> owned(sampling);
  owned->allocate(1, seed, stream);
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return owned;
}

inline DeviceInfo this_device() {
  std::string why;
  const auto d = query_device(&why);
  if (!d) throw std::runtime_error("no device: " + why);
  return *d;
}

// The backends of `routine` that run on this GPU in this build (cuda, cub where the routine has it,
// flashinfer where built).
inline std::vector<const Backend*> runnable_backends(const Routine& routine) {
  std::vector<const Backend*> out;
  const DeviceInfo device = this_device();
  for (const auto& b : routine.backends()) {
    if (b->can_run_on(device)) out.push_back(b.get());
  }
  return out;
}

// "routine backend: 3/37 (8.11%) elements differ in samples: <rule>" for every failed comparison.
inline std::string describe_failures(const RefcheckResult& r) {
  std::string s;
  for (const Comparison& c : r.comparisons) {
    if (c.mismatches == 0 && c.total > 0) continue;
    s += c.tensor + ": " + std::to_string(c.mismatches) + "/" + std::to_string(c.total) + " differ (max abs error " +
         std::to_string(c.max_abs_error) + ") " + c.rule + "\n";
  }
  return s;
}

}  // namespace kbench::testing
