// What both backends of moe_a2a_dispatch_combine share: one call is dispatch then combine, each a
// stage of its own (--per_phase_timing), and --validate, as the reference runs it before timing:
// dispatch, a fake expert stage, combine, checked on every rank; rank 0 prints the verdict and a
// failure stops the case.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string_view>
#include <vector>

#include "core/backend.hpp"

namespace kbench {

class MoeA2aCase;

class A2aOperation : public Operation {
 public:
  virtual void dispatch(cudaStream_t stream, int copy) = 0;
  virtual void combine(cudaStream_t stream, int copy) = 0;

  void launch(cudaStream_t stream, int copy) final {
    dispatch(stream, copy);
    combine(stream, copy);
  }
  [[nodiscard]] std::vector<OperationStage> stages() final {
    return {{"dispatch", [this](cudaStream_t s, int copy) { dispatch(s, copy); }},
            {"combine", [this](cudaStream_t s, int copy) { combine(s, copy); }}};
  }
};

// With --validate: the check above (throws CaseError "[VALIDATE] FAILED ..." where any rank's output
// is off). Returns `operation`.
[[nodiscard]] std::unique_ptr<Operation> validated(std::unique_ptr<A2aOperation> operation, MoeA2aCase& c,
                                                   std::string_view backend, cudaStream_t stream);

}  // namespace kbench
